"""Keeping things on disk: saved documents (:mod:`.persist`), the Milvus vector store
(:mod:`.milvus_store`), files written atomically into folders the course made
(:mod:`.safe_folder`, :mod:`.saved_files`) and the JSON shapes they are checked against
(:mod:`.json_shape`). A store uses the ideas' public names only; no idea imports a store.
"""
