"""A local stand-in server speaking the OpenAI HTTP protocol (and the common /rerank one).

It lets tests drive the real `openai` client and real HTTP on 127.0.0.1. Behaviour is
scripted per test: `server.plan` is a list of status codes to answer before succeeding,
`server.error_headers` headers (e.g. `Retry-After`) those scripted errors carry,
`server.drip` makes it send each answer one byte at a time, that many seconds apart,
`server.reply` (a JSON payload) and `server.raw` (bytes, e.g. not JSON) replace the next
successful answer. Besides the OpenAI routes it speaks a custom embedding dialect on
`/custom/embed`: `{"texts": [...]}` -> `{"embeddings": [{"index": i, "embedding": [...]}]}`.
"""

import hashlib
import http.server
import json
import threading
import time


def fake_vector(text, dim=8):
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [b / 255.0 + 0.01 for b in digest[:dim]]


class StandIn:
    def __init__(self):
        self.plan = []          # status codes to return first (e.g. [429, 500])
        self.malformed = False  # answer 200 with a body that is not the protocol
        self.replies = []       # chat replies to give, in order (then: "ok")
        self.delay = 0.0        # seconds to wait before answering (timeouts)
        self.error_headers = {}  # headers sent with the scripted errors of `plan`
        self.drip = 0.0         # seconds between the bytes of an answer (a slow drip)
        self.reply = None       # a JSON payload to answer with (200) instead of the protocol's
        self.raw = None         # bytes to answer with (200) instead, e.g. b"<html>"
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, body))
                if server.delay:
                    time.sleep(server.delay)
                if server.plan:
                    self._send(server.plan.pop(0), {"error": {"message": "scripted"}},
                               server.error_headers)
                elif server.malformed:
                    self._send(200, {"unexpected": True})
                elif server.reply is not None:
                    self._send(200, server.reply)
                elif server.raw is not None:
                    self._send(200, raw=server.raw)
                elif self.path.endswith("/custom/embed"):
                    data = [{"index": i, "embedding": fake_vector(t)}
                            for i, t in enumerate(body["texts"])]
                    self._send(200, {"embeddings": data})
                elif self.path.endswith("/embeddings"):
                    inputs = body["input"]
                    data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                            for i, t in enumerate(inputs)]
                    self._send(200, {"object": "list", "data": data, "model": body["model"],
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                elif self.path.endswith("/chat/completions"):
                    text = server.replies.pop(0) if server.replies else "ok"
                    self._send(200, {"id": "c1", "object": "chat.completion", "created": 0,
                                     "model": body["model"],
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant",
                                                              "content": text}}]})
                elif self.path.endswith("/rerank"):
                    query = set(body["query"])
                    results = [{"index": i, "relevance_score": len(query & set(d)) / len(query)}
                               for i, d in enumerate(body["documents"])]
                    self._send(200, {"results": results})
                else:
                    self._send(404, {"error": {"message": "no such route"}})

            def _send(self, status, payload=None, headers=None, raw=None):
                data = json.dumps(payload).encode("utf-8") if raw is None else raw
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self._headers_buffer.append(b"\r\n")  # what end_headers() would send
                raw, self._headers_buffer = b"".join(self._headers_buffer) + data, []
                step = 1 if server.drip else len(raw)  # a drip: one byte at a time
                try:
                    for i in range(0, len(raw), step):
                        time.sleep(server.drip)
                        self.wfile.write(raw[i:i + step])
                except OSError:  # the client gave up (a timeout) and closed the connection
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
