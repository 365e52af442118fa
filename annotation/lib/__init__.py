"""Django-free logic of the annotation app: URL checks, templates, filter rules, agreement statistics."""
