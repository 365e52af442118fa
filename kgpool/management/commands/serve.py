"""``kgpool serve``: the web site on a production server (granian by default; ``kgpool/serving.py``)."""
from __future__ import annotations

import os
import shlex

from django.conf import settings
from django.core.management.base import CommandError

from kgpool.commands import KgpoolCommand, bounded_int
from kgpool.serving import DEFAULT_SERVER, LOG_LEVELS, SERVERS, default_workers, server_command, split_bind


class Command(KgpoolCommand):
    help = ("Serve the site with a production server (granian; --server gunicorn for gunicorn): behind a reverse "
            "proxy that terminates TLS, see README 'Deploying behind HTTPS'. For development: runserver.")

    def add_arguments(self, parser):
        workers = default_workers()
        parser.add_argument("--bind", default="127.0.0.1:8000", help="HOST:PORT to listen on (default 127.0.0.1:8000)")
        parser.add_argument("--workers", type=bounded_int(1, 1024), default=workers,
                            help="worker processes, one request at a time each (default two per core and one: "
                                 f"{workers} here)")
        parser.add_argument("--server", choices=SERVERS, default=DEFAULT_SERVER, help="default: %(default)s")
        parser.add_argument("--log-level", choices=LOG_LEVELS, default="info", help="the server's own log")

    def handle(self, *args, **options):
        try:
            host, port = split_bind(options["bind"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.check_migrations()  # a notice, as runserver gives, when the database is behind the code
        if settings.DEBUG:
            self.stderr.write("warning: DEBUG is on: error pages show settings and the server's environment "
                              "(DEBUG=false in production; python manage.py check --deploy)")
        argv = server_command(options["server"], host, port, options["workers"], log_level=options["log_level"])
        self.stderr.write(f"serving on {options['bind']}: {shlex.join(argv)}")
        self.stderr.flush()
        try:
            os.execv(argv[0], argv)  # the server takes this process: signals reach it, its exit status is ours
        except OSError as exc:
            raise CommandError(f"could not start {options['server']}: {exc}") from None
