"""The rerank models (RerankEndpoint): bad input and faults."""

from bad_inputs import REMOTE_NUMBERS, Case, clear_error_test, remote

from course_lib import RemoteTimeout

# ==================================================================== bad inputs

# The embedding and rerank endpoints keep the same rules as the chat client: one name
# (retries=), one check of timeout= and deadline=, and a call cut off at its deadline.

REMOTE_CASES: list[Case] = [
    *[Case("remote", f"{client}-{name}", remote(client, **{argument: value}), ValueError,
           match) for client in ("rerank-endpoint",)
      for name, argument, value, match in REMOTE_NUMBERS],
    Case("remote", "rerank-silent-cut-off-by-deadline-over-retries",
         remote("rerank-endpoint", "silent", 1.2, timeout=0.2, deadline=1.2, retries=3),
         RemoteTimeout, r"rerank endpoint .* deadline of 1\.2 s \(\d tries, each allowed "
                        r"timeout=0\.2 s.*to RerankEndpoint"),
]


test_bad_input_gets_a_clear_error = clear_error_test(REMOTE_CASES)
