"""JSON API of the judging workflow (Django REST framework). Same rules as the pages: every write goes
through annotation.services, every read through annotation.selectors."""
