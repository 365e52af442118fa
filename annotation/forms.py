"""Forms of the judging pages (input shape only; the rules live in the services, whose errors the views put
back onto the fields)."""
from __future__ import annotations

from django import forms

from annotation.lib.rules import RULES
from annotation.models import Label, Role


class JudgmentForm(forms.Form):
    answer = forms.ChoiceField(choices=Label.choices, widget=forms.RadioSelect)
    source_url = forms.CharField(max_length=2000, label="Source URL",
                                 widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false", "inputmode": "url",
                                                              "placeholder": "https://en.wikipedia.org/wiki/…"}))
    quote = forms.CharField(required=False, max_length=5000, label="Quote (optional)",
                            widget=forms.TextInput(attrs={"autocomplete": "off",
                                                          "placeholder": "the sentence that supports your answer"}))
    time_on_task_ms = forms.IntegerField(required=False, min_value=0, max_value=24 * 3600 * 1000,
                                         widget=forms.HiddenInput)
    request_id = forms.CharField(required=False, max_length=100, widget=forms.HiddenInput)


class AdjudicationForm(forms.Form):
    label = forms.ChoiceField(choices=Label.choices, widget=forms.RadioSelect, label="Final label")
    reason = forms.CharField(max_length=5000, widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="Why this label (which source convinced you)")


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)


class DomainsForm(forms.Form):
    domains = forms.CharField(widget=forms.Textarea(attrs={"rows": 8}), required=False,
                              help_text="One domain per line, e.g. wikipedia.org (subdomains are included)")

    def cleaned_list(self) -> list[str]:
        text = self.cleaned_data.get("domains") or ""
        return [line.strip() for line in text.replace(",", "\n").splitlines() if line.strip()]


class FilterForm(forms.Form):
    rules = forms.MultipleChoiceField(choices=[(r, r) for r in RULES], initial=list(RULES),
                                      widget=forms.CheckboxSelectMultiple)
    threshold = forms.FloatField(initial=1.5, min_value=1.0, max_value=100.0,
                                 help_text="Mean distinct tails (heads) at which a side counts as 'many'")


class TemplateForm(forms.Form):
    relation = forms.IntegerField(widget=forms.HiddenInput)
    text = forms.CharField(max_length=500)
