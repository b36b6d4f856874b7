"""The library's version, in one place (``course_lib.__version__`` and saved files' manifests)."""

__version__ = "0.1.0"
