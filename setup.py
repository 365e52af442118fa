"""Packaging details pyproject.toml cannot say: the packages, and the folders outside them that the installed
site needs, shipped inside the kgpool package (so an installed kgpool finds them where a checkout has them):
templates/ -> kgpool/templates (found as an app's templates), examples/ -> kgpool/examples (the quickstart's
campaign file), datasets/ -> kgpool/datasets (the bundled UMLS, at the same place relative to the examples)."""
from setuptools import find_packages, setup

EXTRA = {"kgpool.templates": "templates", "kgpool.examples": "examples", "kgpool.datasets": "datasets",
         "kgpool.datasets.umls": "datasets/umls"}

setup(
    packages=find_packages(include=["kgpool", "kgpool.*", "pooling", "pooling.*", "annotation", "annotation.*",
                                    "evaluation", "evaluation.*"]) + list(EXTRA),
    package_dir=EXTRA,
    package_data={"": ["templates/**/*", "static/**/*", "*.html", "**/*.html", "*.toml", "*.txt", "*.tsv", "*.md",
                       "*.js", "*.css"]},
    include_package_data=True,
)
