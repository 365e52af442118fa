"""Forms of the judging pages (input shape only; the rules live in the services, whose errors the views put
back onto the fields)."""
from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from annotation.lib.rules import RULES
from annotation.lib.templates import TemplateError, check_template
from annotation.lib.type_rule import TypeOptions
from annotation.models import Answer, Label, QuestionTemplate, Role


class JudgmentForm(forms.Form):
    answer = forms.ChoiceField(choices=Answer.choices, widget=forms.RadioSelect)
    source_url = forms.CharField(max_length=2000, label="Source URL", required=False,  # the evidence policy decides
                                 widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false", "inputmode": "url",
                                                              "placeholder": "https://en.wikipedia.org/wiki/…"}))
    quote = forms.CharField(required=False, max_length=5000, label="Quote or comment",  # required with can't tell
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
    role = forms.ChoiceField(choices=Role.choices, initial=Role.ANNOTATOR)  # the common case, never admin by default


class DomainsForm(forms.Form):
    domains = forms.CharField(widget=forms.Textarea(attrs={"rows": 8}), required=False,
                              help_text="One domain per line, e.g. wikipedia.org (subdomains are included)")

    def cleaned_list(self) -> list[str]:
        text = self.cleaned_data.get("domains") or ""
        return [line.strip() for line in text.replace(",", "\n").splitlines() if line.strip()]


class JudgingOrderForm(forms.Form):
    order = forms.ChoiceField(choices=[], help_text="Applied to the queue at once; partly judged items still come first")
    budget = forms.IntegerField(required=False, min_value=0,
                                help_text="Pool items people may start (blank: the whole pool)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        from annotation.models import JUDGING_ORDERS

        self.fields["order"].choices = JUDGING_ORDERS


class FilterForm(forms.Form):
    rules = forms.MultipleChoiceField(choices=[(r, r) for r in RULES], initial=list(RULES),
                                      widget=forms.CheckboxSelectMultiple)
    threshold = forms.FloatField(initial=1.5, min_value=1.0, max_value=100.0,
                                 help_text="Mean distinct tails (heads) at which a side counts as 'many'")
    type_source = forms.ChoiceField(
        choices=[("dataset", "the KG's own types"), ("roles", "role types (relations seen in train)")],
        initial="dataset", required=False,
        help_text="Role types on any KG; the KG's own types give no type rule on a KG without type data")
    type_min_support = forms.IntegerField(initial=TypeOptions.min_support, min_value=1, max_value=1_000_000,
                                          required=False, help_text="Train entities a type needs to count")
    type_max_overlap = forms.FloatField(initial=TypeOptions.max_overlap, min_value=0.0, max_value=0.99,
                                        required=False,
                                        help_text="Share of a type's entities allowed on the relation's side")

    def type_options(self) -> TypeOptions:
        """The type rule's options (defaults for fields left out)."""
        data = self.cleaned_data
        return TypeOptions(
            TypeOptions.min_support if data.get("type_min_support") is None else data["type_min_support"],
            TypeOptions.max_overlap if data.get("type_max_overlap") is None else data["type_max_overlap"],
            data.get("type_source") or "dataset",
        )


class TemplateForm(forms.Form):
    relation = forms.IntegerField(widget=forms.HiddenInput)
    text = forms.CharField(max_length=500)


class QuestionTemplateAdminForm(forms.ModelForm):
    """The Django admin's template form: the same check as the manage page (no format spec, known names)."""

    class Meta:
        model = QuestionTemplate
        fields = "__all__"

    def clean_text(self) -> str:
        try:
            return check_template(self.cleaned_data.get("text", ""))
        except TemplateError as exc:
            raise ValidationError(str(exc)) from None
