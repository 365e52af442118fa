"""Writes of the pooling app, one module per concept (Django-Styleguide services)."""
