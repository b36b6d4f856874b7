"""The remote embedders (OpenAIEmbedder, HTTPEmbedder): bad input and faults."""

from bad_inputs import REMOTE_NUMBERS, Case, clear_error_test, remote

from course_lib import RemoteTimeout

# ==================================================================== bad inputs

# The embedding and rerank endpoints keep the same rules as the chat client: one name
# (retries=), one check of timeout= and deadline=, and a call cut off at its deadline.

REMOTE_CASES: list[Case] = [
    Case("remote", "openai-embedder-max-retries", remote("openai-embedder", max_retries=1),
         TypeError, r"OpenAIEmbedder takes retries=, not max_retries=: the one name"),
    *[Case("remote", f"{client}-{name}", remote(client, **{argument: value}), ValueError,
           match) for client in ("openai-embedder", "http-embedder")
      for name, argument, value, match in REMOTE_NUMBERS],
    Case("remote", "openai-embedder-drip-cut-off-by-timeout",
         remote("openai-embedder", "drip", 0.5, timeout=0.5, retries=0), RemoteTimeout,
         r"failed after 1 try: APITimeoutError.*within timeout=0\.5 s per try"),
    Case("remote", "http-embedder-drip-cut-off-by-deadline",
         remote("http-embedder", "drip", 0.6, timeout=30, deadline=0.6), RemoteTimeout,
         r"gave no complete reply within the deadline of 0\.6 s \(1 try.*pass larger "
         r"timeout= and deadline= \(seconds\) to _Texts"),
]


test_bad_input_gets_a_clear_error = clear_error_test(REMOTE_CASES)
