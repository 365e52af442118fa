"""Request and response shapes of the pooling API (/api/v1/kgs/, /pools/, /uploads/; OpenAPI schema)."""
from __future__ import annotations

from rest_framework import serializers

from pooling.engine.architectures import ARCHITECTURE_NAMES

INT32 = 2**31 - 1
NAME = {"max_length": 100, "help_text": "letters, digits, - and _, starting with a letter or a digit"}


class KnowledgeGraphOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    num_entities = serializers.IntegerField()
    num_relations = serializers.IntegerField()
    num_train = serializers.IntegerField()
    num_valid = serializers.IntegerField()
    num_test = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class KGUploadIn(serializers.Serializer):
    name = serializers.CharField(**NAME)
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")
    train = serializers.FileField(help_text="`h r t` per line (tab or space separated)")
    valid = serializers.FileField()
    test = serializers.FileField()
    entity_names = serializers.FileField(required=False, help_text="`id<TAB>name`")
    wikidata = serializers.FileField(required=False, help_text="entity_wikidata.json")
    relation_types = serializers.FileField(required=False, help_text="`relation<TAB>domain<TAB>range`")
    relation_text = serializers.FileField(required=False, help_text="`relation<TAB>words`")
    entity_types = serializers.FileField(required=False, help_text="CoDEx entity2types.json")
    type_labels = serializers.FileField(required=False, help_text="CoDEx types.json")
    relation_labels = serializers.FileField(required=False, help_text="CoDEx relations.json")


class UploadOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField(help_text="kg, scores, run or checkpoint")
    name = serializers.CharField()
    status = serializers.CharField(help_text="pending, running, done or failed")
    stage = serializers.CharField()
    progress_done = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    error = serializers.CharField(help_text="why it failed (nothing was imported)")
    kg = serializers.CharField(allow_null=True, source="kg.name", default=None)
    system = serializers.CharField(allow_null=True, source="system.name", default=None)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class SystemOut(serializers.Serializer):
    name = serializers.CharField()
    architecture = serializers.CharField()
    origin = serializers.CharField()
    status = serializers.CharField(help_text="pending, training, ready or failed")
    error = serializers.CharField()
    valid_mrr = serializers.FloatField(allow_null=True)
    test_mrr = serializers.FloatField(allow_null=True)
    config = serializers.JSONField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class TrainIn(serializers.Serializer):
    architecture = serializers.ChoiceField(choices=ARCHITECTURE_NAMES)
    name = serializers.CharField(required=False, **NAME)
    dim = serializers.IntegerField(required=False, min_value=1, max_value=4096)
    epochs = serializers.IntegerField(required=False, min_value=1, max_value=10_000)
    lr = serializers.FloatField(required=False, min_value=1e-7, max_value=10.0)
    batch_size = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000)
    seed = serializers.IntegerField(required=False, min_value=0, max_value=INT32)
    patience = serializers.IntegerField(required=False, min_value=0, max_value=10_000)
    eval_every = serializers.IntegerField(required=False, min_value=1, max_value=10_000)
    device = serializers.CharField(required=False, max_length=20)
    num_threads = serializers.IntegerField(required=False, min_value=1, max_value=1024)


class SystemUploadIn(serializers.Serializer):
    kind = serializers.ChoiceField(choices=("scores", "run", "checkpoint"))
    name = serializers.CharField(**NAME)
    sample = serializers.CharField(required=False, max_length=100, help_text="the sample it ranks (scores, run)")
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000, default="")
    scores = serializers.FileField(required=False, help_text=".npy (Q, E) or .npz with scores [entities, qids]")
    entities = serializers.FileField(required=False, help_text="entity key of each score column, one a line")
    questions = serializers.FileField(required=False, help_text="qids of the rows, or the campaign's questions")
    run = serializers.FileField(required=False, help_text="TREC run: qid Q0 entity rank score tag")
    checkpoint = serializers.FileField(required=False, help_text="PyKEEN trained_model.pkl or training checkpoint")
    model = serializers.CharField(required=False, max_length=50, help_text="PyKEEN model class (checkpoints)")
    k = serializers.IntegerField(required=False, min_value=1, max_value=INT32)


class SampleOut(serializers.Serializer):
    name = serializers.CharField()
    method = serializers.CharField()
    seed = serializers.IntegerField(allow_null=True)
    size = serializers.IntegerField()
    kl_divergence = serializers.FloatField(allow_null=True)
    questions = serializers.IntegerField(source="num_questions")
    created_at = serializers.DateTimeField()


class SampleIn(serializers.Serializer):
    size = serializers.IntegerField(min_value=1, max_value=INT32)
    seed = serializers.IntegerField(min_value=0, max_value=INT32, default=0)
    stratified = serializers.BooleanField(default=False)
    name = serializers.CharField(required=False, **NAME)


class PoolOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kg = serializers.CharField(source="sample.kg.name")
    sample = serializers.CharField(source="sample.name")
    depth = serializers.IntegerField()
    systems = serializers.ListField(child=serializers.CharField(), source="system_names")
    origin = serializers.CharField()
    status = serializers.CharField(help_text="pending, running, done or failed")
    progress_done = serializers.IntegerField(help_text="ranking chunks done")
    progress_total = serializers.IntegerField()
    entries = serializers.IntegerField(source="num_entries")
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class PoolIn(serializers.Serializer):
    kg = serializers.CharField(max_length=100)
    sample = serializers.CharField(max_length=100)
    systems = serializers.ListField(child=serializers.CharField(max_length=100), min_length=1, max_length=100)
    depth = serializers.IntegerField(min_value=1, max_value=INT32)
    name = serializers.CharField(required=False, max_length=200)


class HitOut(serializers.Serializer):
    system = serializers.CharField(allow_null=True)
    qid = serializers.CharField()
    rank = serializers.IntegerField(allow_null=True)


class PoolEntryOut(serializers.Serializer):
    head = serializers.CharField()
    relation = serializers.CharField()
    tail = serializers.CharField()
    depth = serializers.IntegerField(allow_null=True, help_text="best rank of any system (null: unknown)")
    num_systems = serializers.IntegerField()
    hits = HitOut(many=True, help_text="provenance: which system retrieved it for which question, at which rank")


class PoolEntryPage(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = PoolEntryOut(many=True)
