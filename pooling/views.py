from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from pooling.models import KnowledgeGraph


@login_required
def home(request: HttpRequest) -> HttpResponse:
    from annotation.selectors.web import campaigns_for

    return render(request, "pooling/home.html", {"kgs": KnowledgeGraph.objects.all(), "campaigns": campaigns_for(request.user)})
