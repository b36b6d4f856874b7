"""One float order for MKL and torch (course_lib._support.float_order): importing the
package sets the environment variables before anything computes, and keeps a value the
user set. Each check runs in a fresh process: the variables are read once per process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = {"MKL_CBWR": "AVX2,STRICT", "ATEN_CPU_CAPABILITY": "avx2"}
SHOW = ("import json, os, sys\n{imports}\n"
        "print(json.dumps({{name: os.environ.get(name) for name in {names!r}}}))")


def environment_after(imports: str, **preset: str) -> dict[str, str | None]:
    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(preset)
    code = SHOW.format(imports=imports, names=sorted(VARIABLES))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("imports", ["import course_lib", "import course_lib.bm25",
                                     "from course_lib._support import http_json"])
def test_importing_the_package_sets_both_variables(imports):
    assert environment_after("pass") == dict.fromkeys(VARIABLES)  # unset to begin with
    assert environment_after(imports) == VARIABLES


def test_a_value_the_user_set_is_kept():
    assert environment_after("import course_lib", MKL_CBWR="COMPATIBLE") == \
        {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "avx2"}
    assert environment_after("import course_lib", ATEN_CPU_CAPABILITY="default",
                             MKL_CBWR="AUTO") == \
        {"MKL_CBWR": "AUTO", "ATEN_CPU_CAPABILITY": "default"}


def test_the_root_imports_it_first_before_any_library_that_computes():
    code = ("import sys\nimport course_lib\n"
            "ours = [m for m in sys.modules if m.startswith('course_lib.')]\n"
            "print(ours[:2], [m for m in ('torch', 'numpy', 'scipy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['course_lib._support', 'course_lib._support.float_order'] []"
