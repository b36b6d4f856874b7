# The Chinese notebooks (zh-CN/) are built from these by tools/translations.py: the same code
# cells and outputs, copied. nbval runs the English ones only — no notebook is executed twice;
# tests/repo/test_translations.py checks the copies.
collect_ignore_glob = ["zh-CN/*"]
