"""pytest.raises(match=...) for a whole message: a plain pattern is searched for, so it also matches inside a
longer message (e.g. a mutated one); this anchors it and escapes the message's regex characters."""
from __future__ import annotations

import re


def whole(message: str) -> str:
    return f"^{re.escape(message)}$"
