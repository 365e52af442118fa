"""Reads of the pooling app, one module per concept (Django-Styleguide selectors)."""
