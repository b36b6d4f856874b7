"""The browser test: the course in JupyterLab in Chromium (see test_course_in_browser.py)."""
