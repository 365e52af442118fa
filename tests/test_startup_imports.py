"""Starting a web worker or a manage.py command loads the settings, the apps and the URLconf with every view; the
heavy numeric libraries wait until a request or a command needs them (scipy.stats and pandas took 0.7 of the 1.5 s
that every ``manage.py`` command spent starting, through the evaluation pages' imports)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "scipy.stats", "pandas")


def test_loading_the_site_imports_no_heavy_library():
    code = ("import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'kgpool.settings'); "
            "django.setup(); from django.urls import get_resolver; get_resolver().url_patterns; "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_management_command_starts_without_them():
    """``manage.py check`` runs the system checks over every URL pattern and model, as most commands do first."""
    code = ("import os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'kgpool.settings'); "
            "sys.argv = ['manage.py', 'check']; "
            "import django.core.management as m; m.execute_from_command_line(sys.argv); "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
