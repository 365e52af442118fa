"""pooling.engine.userfiles' rules, case by case (issue 19: each rule's mutants): every refusal's whole message, the
size and line-length limits at their exact bounds, files that grow while read (/proc files report size 0), the
descriptor's flags and its closing on a refusal, line numbers with and without universal newlines, .npy headers."""
from __future__ import annotations

import io
import os
import socket
import stat

import numpy as np
import pytest

from pooling.engine import userfiles
from pooling.engine.userfiles import UserFileError
from tests._raises_support import whole


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


# ---------------------------------------------------------------------------------------------------- errors


def test_user_file_error_fields():
    error = UserFileError("a/f.tsv", 7, "bad")
    assert (str(error), error.where, error.path, error.line, error.message) == ("a/f.tsv:7: bad", "a/f.tsv:7",
                                                                               "a/f.tsv", 7, "bad")
    error = UserFileError(os.path.join("a", "g"), None, "worse")
    assert (str(error), error.where, error.path, error.line) == ("a/g: worse", "a/g", "a/g", None)
    assert UserFileError("f", 0, "m").where == "f:0"  # line 0 is still a line
    assert isinstance(error, ValueError)


def test_shown_at_its_limit():
    assert userfiles.shown("x" * 58) == "'" + "x" * 58 + "'"  # 60 characters: whole
    assert userfiles.shown("x" * 59) == "'" + "x" * 59 + "...' (59 characters)"
    assert userfiles.shown("ab", limit=3) == "'ab...' (2 characters)"
    assert userfiles.shown("ab", limit=4) == "'ab'"
    assert userfiles.shown(12345, limit=2) == "12...' (5 characters)"
    assert userfiles.shown("y" * 2000) == "'" + "y" * 59 + "...' (2,000 characters)"


# ---------------------------------------------------------------------------------------------------- opening


def test_refusals_name_the_kind_and_close_the_descriptor(tmp_path):
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "p")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "s"))
    try:
        cases = [(tmp_path / "d", "is a directory, not a regular file"),
                 (tmp_path / "p", "is a FIFO (named pipe), not a regular file"),
                 ("/dev/null", "is a character device, not a regular file")]
        if os.path.exists("/dev/loop0") and stat.S_ISBLK(os.stat("/dev/loop0").st_mode) \
                and os.access("/dev/loop0", os.R_OK):
            cases.append(("/dev/loop0", "is a block device, not a regular file"))
        before = open_descriptors()
        for path, message in cases:
            with pytest.raises(UserFileError, match=whole(f"{path}: {message}")):
                userfiles.open_regular(path)
            assert open_descriptors() == before, path
        # a socket cannot be opened at all (ENXIO): refused at the open
        with pytest.raises(UserFileError, match=whole(f"{tmp_path / 's'}: cannot open: No such device or address")):
            userfiles.open_regular(tmp_path / "s")
    finally:
        listening.close()
    with pytest.raises(UserFileError, match=whole(f"{tmp_path / 'nothing'}: file not found")):
        userfiles.open_regular(tmp_path / "nothing")
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(UserFileError, match=whole(f"{tmp_path / 'f' / 'x'}: cannot open: Not a directory")):
        userfiles.open_regular(tmp_path / "f" / "x")


def test_a_regular_file_is_opened_blocking_for_binary_reading(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    with userfiles.open_regular(tmp_path / "f") as stream:
        assert os.get_blocking(stream.fileno())  # opened non-blocking, switched back once checked
        assert stream.mode == "rb" and stream.read() == b"abc"


# ---------------------------------------------------------------------------------------------------- reading


def test_read_bytes_size_limit_at_its_bound(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 1234)
    assert userfiles.read_bytes(tmp_path / "f", max_bytes=1234) == b"x" * 1234
    assert userfiles.read_bytes(tmp_path / "f") == b"x" * 1234
    with pytest.raises(UserFileError, match=whole(f"{tmp_path / 'f'}: is 1,234 bytes, more than the 1,233 allowed")):
        userfiles.read_bytes(tmp_path / "f", max_bytes=1233)
    (tmp_path / "empty").write_bytes(b"")
    assert userfiles.read_bytes(tmp_path / "empty", max_bytes=0) == b""


def test_a_file_reported_empty_is_read_to_its_end():
    # /proc files report size 0 and still have content: read past the reported size, in bounded steps
    expected = open("/proc/self/cmdline", "rb").read()
    assert len(expected) > 1
    assert userfiles.read_bytes("/proc/self/cmdline") == expected
    assert userfiles.read_bytes("/proc/self/cmdline", max_bytes=len(expected)) == expected
    with pytest.raises(UserFileError, match=whole(f"/proc/self/cmdline: is more than the {len(expected) - 1:,} "
                                                  "bytes allowed")):
        userfiles.read_bytes("/proc/self/cmdline", max_bytes=len(expected) - 1)


def test_a_file_reported_empty_longer_than_one_step(monkeypatch, tmp_path):
    # more than one read step past the reported size: every part is kept, in order
    data = bytes(range(256)) * 9000  # 2.3 MB: three 1 MiB steps
    path = tmp_path / "f"
    path.write_bytes(data)
    real_fstat = os.fstat

    def fstat(descriptor):
        result = real_fstat(descriptor)
        if stat.S_ISREG(result.st_mode) and os.readlink(f"/proc/self/fd/{descriptor}") == str(path):
            return os.stat_result((*result[:6], 0, *result[7:]))  # st_size 0, as /proc reports
        return result

    monkeypatch.setattr(os, "fstat", fstat)
    assert userfiles.read_bytes(path) == data
    with pytest.raises(UserFileError, match=whole(f"{path}: is more than the 1,048,577 bytes allowed")):
        userfiles.read_bytes(path, max_bytes=(1 << 20) + 1)
    assert userfiles.read_bytes(path, max_bytes=len(data)) == data


def test_a_read_error_is_a_user_file_error():
    with pytest.raises(UserFileError, match=whole("/proc/self/mem: cannot read: Input/output error")):
        userfiles.read_bytes("/proc/self/mem")


# ---------------------------------------------------------------------------------------------------- streams


def test_read_stream_line_limit_at_its_bound():
    assert userfiles.read_stream(io.BytesIO(b"abcd\nef"), "-", max_line_bytes=4) == b"abcd\nef"
    assert userfiles.read_stream(io.BytesIO(b""), "-") == b""
    with pytest.raises(UserFileError, match=whole("-:3: line of more than 4 bytes (not a text file of this "
                                                  "format?)")):
        userfiles.read_stream(io.BytesIO(b"a\nb\nabcde"), "-", max_line_bytes=4)
    with pytest.raises(UserFileError, match=whole("in:1: line of more than 4 bytes (not a text file of this "
                                                  "format?)")):
        userfiles.read_stream(io.BytesIO(b"abcde"), "in", max_line_bytes=4)
    # lines closed inside the stream are left to check_line_lengths
    assert userfiles.read_stream(io.BytesIO(b"abcdefgh\nab"), "-", max_line_bytes=4) == b"abcdefgh\nab"


def test_read_stream_across_chunks():
    step = 1 << 20
    # an open line that spans chunks is counted across them
    data = b"a\nb\n" + b"x" * (step - 4) + b"y" * 10
    with pytest.raises(UserFileError, match=whole("-:3: line of more than 1,048,580 bytes (not a text file of "
                                                  "this format?)")):
        userfiles.read_stream(io.BytesIO(data), "-", max_line_bytes=step + 4)
    assert userfiles.read_stream(io.BytesIO(data), "-", max_line_bytes=step + 6) == data
    # a line end in a later chunk restarts the count from there, and the closed lines of every chunk are added up
    data = b"y" * (step - 3) + b"\n\n\n" + b"ab\n\nzzzzzz"
    assert userfiles.read_stream(io.BytesIO(data), "-", max_line_bytes=6) == data
    with pytest.raises(UserFileError, match=whole("-:6: line of more than 6 bytes (not a text file of this "
                                                  "format?)")):
        userfiles.read_stream(io.BytesIO(data + b"z"), "-", max_line_bytes=6)


# ---------------------------------------------------------------------------------------------------- lines


def test_line_of_offset_by_hand():
    data = b"a\r\nb\rc\nd"
    # offsets: a0 \r1 \n2 b3 \r4 c5 \n6 d7 (never asked: the \n of a \r\n, which no run starts at)
    offsets = [0, 1, 3, 4, 5, 6, 7]
    assert [userfiles._line_of_offset(data, offset, False) for offset in offsets] == [1, 1, 2, 2, 2, 2, 3]
    assert [userfiles._line_of_offset(data, offset, True) for offset in offsets] == [1, 1, 2, 2, 3, 3, 4]


def test_check_line_lengths_at_its_bound():
    userfiles.check_line_lengths("f", b"abcd\nabcd\n", max_line_bytes=4)
    userfiles.check_line_lengths("f", b"ab\r\ncd", max_line_bytes=3)  # \r counted without universal newlines
    userfiles.check_line_lengths("f", b"ab\r\ncd", max_line_bytes=2, universal_newlines=True)
    with pytest.raises(UserFileError, match=whole("f:2: line of 5 bytes, longer than the 4 allowed (not a text "
                                                  "file of this format?)")):
        userfiles.check_line_lengths("f", b"abcd\nabcde", max_line_bytes=4)
    with pytest.raises(UserFileError, match=whole("f:1: line of 3 bytes, longer than the 2 allowed (not a text "
                                                  "file of this format?)")):
        userfiles.check_line_lengths("f", b"ab\r\ncd", max_line_bytes=2, universal_newlines=False)
    userfiles.check_line_lengths("f", b"ab\r\ncd\rxyz", max_line_bytes=3, universal_newlines=True)
    with pytest.raises(UserFileError, match=whole("f:3: line of 1,001 bytes, longer than the 3 allowed (not a text "
                                                  "file of this format?)")):
        userfiles.check_line_lengths("f", b"ab\r\ncd\r" + b"x" * 1001, max_line_bytes=3, universal_newlines=True)
    assert userfiles.MAX_LINE_BYTES == 1 << 20
    userfiles.check_line_lengths("f", b"x" * (1 << 20))
    with pytest.raises(UserFileError, match=whole("f:1: line of 1,048,577 bytes, longer than the 1,048,576 allowed "
                                                  "(not a text file of this format?)")):
        userfiles.check_line_lengths("f", b"x" * ((1 << 20) + 1))


def test_check_field_lengths_at_its_bound_and_separators():
    userfiles.check_field_lengths("f", b"abc def\tghi\r\njkl", 3, "keys")
    for separator, line in ((b" ", 1), (b"\t", 1), (b"\r", 1), (b"\n", 2)):  # a lone \r ends no line here
        with pytest.raises(UserFileError, match=whole(f"f:{line}: a field of 4 characters: keys are at most 3")):
            userfiles.check_field_lengths("f", b"abc" + separator + b"defg", 3, "keys")
    userfiles.check_field_lengths("f", b"abc,defg", 7, "keys", separators=b",")
    with pytest.raises(UserFileError, match=whole("g:1: a field of 4 characters: ids are at most 3")):
        userfiles.check_field_lengths("g", b"abc,defg", 3, "ids", separators=b",")
    # bytes that are not UTF-8 count one character each ("replace")
    with pytest.raises(UserFileError, match=whole("f:1: a field of 4 characters: keys are at most 3")):
        userfiles.check_field_lengths("f", b"\xff\xfe\xfd\xfc", 3, "keys")


def test_decode_utf8_names_the_line():
    assert userfiles.decode_utf8("f", "é\n".encode()) == "é\n"
    with pytest.raises(UserFileError, match=whole("f:2: not valid UTF-8 (byte 0xff)")):
        userfiles.decode_utf8("f", b"a\rb\nc\xff")
    with pytest.raises(UserFileError, match=whole("f:3: not valid UTF-8 (byte 0x80)")):
        userfiles.decode_utf8("f", b"a\rb\nc\x80", universal_newlines=True)


def test_read_text(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"a\r\nb\rc\n")
    assert userfiles.read_text(path) == "a\r\nb\rc\n"
    assert userfiles.read_text(path, universal_newlines=True) == "a\nb\nc\n"
    path.write_bytes(b"abc\nabcd\n")
    assert userfiles.read_text(path, max_line_bytes=4) == "abc\nabcd\n"
    with pytest.raises(UserFileError, match=whole(f"{path}:2: line of 4 bytes, longer than the 3 allowed (not a "
                                                  "text file of this format?)")):
        userfiles.read_text(path, max_line_bytes=3)
    path.write_bytes(b"a\rbcd\re")
    with pytest.raises(UserFileError, match=whole(f"{path}:2: line of 3 bytes, longer than the 2 allowed (not a "
                                                  "text file of this format?)")):
        userfiles.read_text(path, universal_newlines=True, max_line_bytes=2)
    path.write_bytes(b"a\rb\xff")
    with pytest.raises(UserFileError, match=whole(f"{path}:2: not valid UTF-8 (byte 0xff)")):
        userfiles.read_text(path, universal_newlines=True)
    path.write_bytes(b"x" * ((1 << 20) + 1))
    with pytest.raises(UserFileError, match=r"line of 1,048,577 bytes"):
        userfiles.read_text(path)


# ---------------------------------------------------------------------------------------------------- JSON


def test_read_json(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes('{"a": ["é", 1]}'.encode())
    assert userfiles.read_json(path) == {"a": ["é", 1]}
    assert userfiles.read_json(path, max_bytes=path.stat().st_size) == {"a": ["é", 1]}
    with pytest.raises(UserFileError, match=whole(f"{path}: is 16 bytes, more than the 15 allowed")):
        userfiles.read_json(path, max_bytes=15)
    assert userfiles.read_json(path, "[2]") == [2]  # the text given is parsed, not the file
    assert userfiles.MAX_JSON_BYTES == 1 << 30
    path.write_bytes(b'{"a":\n\xff}')
    with pytest.raises(UserFileError, match=whole(f"{path}:2: not valid UTF-8 (byte 0xff)")):
        userfiles.read_json(path)
    with pytest.raises(UserFileError, match=whole("j:2: invalid JSON: Expecting value")):
        userfiles.read_json("j", '{"a":\n ]')
    with pytest.raises(UserFileError, match=whole("j: invalid JSON: nested too deeply (more than a few hundred "
                                                  "levels)")):
        userfiles.read_json("j", "[" * 100_000 + "]" * 100_000)


# ---------------------------------------------------------------------------------------------------- .npy


def _npy(array: np.ndarray, version=None) -> bytes:
    stream = io.BytesIO()
    np.lib.format.write_array(stream, array, version=version, allow_pickle=True)
    return stream.getvalue()


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_npy_header_fields(version):
    data = _npy(np.zeros((2, 3), dtype=">i2"), version)
    stream = io.BytesIO(b"junk" + data)
    stream.seek(4)
    shape, dtype, offset = userfiles.npy_header(stream, "a.npy")
    assert (shape, dtype, offset) == ((2, 3), np.dtype(">i2"), 4 + len(data) - 12)
    assert all(type(n) is int for n in shape) and type(offset) is int


def test_npy_header_refusals():
    version3 = bytearray(_npy(np.zeros(2), (2, 0)))
    version3[6:8] = b"\x03\x00"
    with pytest.raises(UserFileError, match=whole("a.npy: scores: unsupported .npy format version (3, 0)")):
        userfiles.npy_header(io.BytesIO(bytes(version3)), "a.npy", "scores")
    with pytest.raises(UserFileError, match=whole("a.npy: unsupported .npy format version (3, 0)")):
        userfiles.npy_header(io.BytesIO(bytes(version3)), "a.npy")
    with pytest.raises(UserFileError, match=whole("a.npy: ids: holds pickled object arrays, which are refused; save "
                                                  "plain numeric / string arrays")):
        userfiles.npy_header(io.BytesIO(_npy(np.array([1], dtype=object))), "a.npy", "ids")
    with pytest.raises(UserFileError, match=r"^a\.npy: x: not a readable \.npy array header \(.+\)$"):
        userfiles.npy_header(io.BytesIO(b"not numpy at all"), "a.npy", "x")
    with pytest.raises(UserFileError, match=r"^a\.npy: not a readable \.npy array header \(.+\)$"):
        userfiles.npy_header(io.BytesIO(b"\x93NUMPY\x01\x00\x10\x00{'descr': 1}    \n"), "a.npy")
    # a header longer than numpy's default limit (10,000 bytes) is refused
    big = _npy(np.zeros((1,) * 1, dtype=[(f"f{i:05d}", "<i1") for i in range(700)]))
    with pytest.raises(UserFileError, match=r"(?s)^a\.npy: not a readable \.npy array header \(.+\)$"):
        userfiles.npy_header(io.BytesIO(big), "a.npy")
    assert userfiles.MAX_NPY_HEADER == 10_000


def test_npy_header_of_a_header_near_the_limit():
    # a header under numpy's limit of 10,000 bytes but above smaller limits is read
    data = _npy(np.zeros(1, dtype=[(f"f{i:05d}", "<i1") for i in range(400)]))
    assert 5_000 < len(data) < 10_000
    shape, dtype, _offset = userfiles.npy_header(io.BytesIO(data), "a.npy")
    assert shape == (1,) and len(dtype.names) == 400


def test_array_bytes():
    assert userfiles.array_bytes((3, 4), np.dtype("<f8")) == 96
    assert userfiles.array_bytes((), np.dtype("<i2")) == 2
    assert userfiles.array_bytes((0, 5), np.dtype("<f4")) == 0
    assert userfiles.array_bytes((2**40, 2**30), np.dtype("<f8")) == 2**73  # no int64 overflow


# ---------------------------------------------------------------------------------------------------- more bounds


def test_read_stream_counts_from_the_first_byte():
    assert userfiles.read_stream(io.BytesIO(b"abcd"), "-", max_line_bytes=4) == b"abcd"
    assert userfiles.read_stream(io.BytesIO(b"\nabcd"), "-", max_line_bytes=4) == b"\nabcd"  # a line end at 0
    with pytest.raises(UserFileError, match=whole("-:2: line of more than 4 bytes (not a text file of this "
                                                  "format?)")):
        userfiles.read_stream(io.BytesIO(b"\nabcde"), "-", max_line_bytes=4)


def test_read_stream_stops_after_the_first_step_past_the_limit():
    stream = io.BytesIO(b"x" * (3 << 20))  # /dev/zero in small: refused after one 1 MiB read, not at its end
    with pytest.raises(UserFileError, match=whole("-:1: line of more than 10 bytes (not a text file of this "
                                                  "format?)")):
        userfiles.read_stream(stream, "-", max_line_bytes=10)
    assert stream.tell() == 1 << 20


def test_line_of_offset_counts_from_the_first_byte():
    assert userfiles._line_of_offset(b"\nab", 1, False) == 2
    assert userfiles._line_of_offset(b"\rab", 1, True) == 2
    assert userfiles._line_of_offset(b"\r\nab", 2, True) == 2


def test_line_and_field_separators_are_exactly_these():
    with pytest.raises(UserFileError, match=whole("f:1: line of 5 bytes, longer than the 3 allowed (not a text file "
                                                  "of this format?)")):
        userfiles.check_line_lengths("f", b"ab\rcd", max_line_bytes=3)  # lone \r: no line end by default
    for universal in (False, True):
        with pytest.raises(UserFileError, match=whole("f:1: line of 5 bytes, longer than the 3 allowed (not a text "
                                                      "file of this format?)")):
            userfiles.check_line_lengths("f", b"XXXXX", max_line_bytes=3, universal_newlines=universal)
    with pytest.raises(UserFileError, match=whole("f:1: a field of 4 characters: keys are at most 3")):
        userfiles.check_field_lengths("f", b"XXXX", 3, "keys")


def test_a_field_of_exactly_the_limit_in_characters():
    userfiles.check_field_lengths("f", "éé".encode(), 2, "keys")  # 4 bytes, 2 characters
    with pytest.raises(UserFileError, match=whole("f:1: a field of 3 characters: keys are at most 2")):
        userfiles.check_field_lengths("f", "ééé".encode(), 2, "keys")
