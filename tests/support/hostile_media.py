"""Hostile media, made in memory, for every place Dailies opens bytes it did not make (issue 34, hole 1).

Protocol formats (an SDP description, HLS and DASH manifests, concat lists, data URLs nested in
them) make FFmpeg open sockets, URLs or other files when it is let to pick the format from the
bytes; truncated and malformed containers; and decompression bombs: a PNG of a few hundred bytes
declaring 100,000 x 100,000 pixels, an MP4 declaring millions of frames or hours, a WAV declaring
hours. Besides the material, the watchers a test needs to say "no socket was opened": a loopback
HTTP server counting its connections, and a look at the kernel's table of bound UDP ports.
"""

from __future__ import annotations

import base64
import functools
import io
import socket
import struct
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import av
import numpy as np

# ---------- well-formed material to start from ----------


@functools.cache
def small_mp4(seconds: float = 2.5, fps: int = 8, size: int = 64) -> bytes:
    """A valid H.264 MP4 of `seconds`; PyAV writes its moov after the media data."""
    return wide_mp4(size, size, seconds, fps)


@functools.cache
def wide_mp4(width: int, height: int = 64, seconds: float = 2.5, fps: int = 8) -> bytes:
    """A valid H.264 MP4 whose frames are `width` x `height` (cheap to make when short)."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for i in range(round(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(np.full((height, width, 3), i * 8 % 256, np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buf.getvalue()


@functools.cache
def small_m4a(seconds: float = 2.5, rate: int = 8000) -> bytes:
    """A valid AAC audio in an MP4 container (an M4A) of `seconds` of a quiet tone."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as container:
        stream = container.add_stream("aac", rate=rate, layout="mono")
        total = round(seconds * rate)
        for start in range(0, total, 1024):
            n = min(1024, total - start)
            wave = (0.1 * np.sin(np.arange(start, start + n) / 5)).astype(np.float32)[None, :]
            frame = av.AudioFrame.from_ndarray(wave, format="fltp", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = rate, start, Fraction(1, rate)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buf.getvalue()


@functools.cache
def small_wav(seconds: float = 2.5, rate: int = 8000) -> bytes:
    """A valid mono 16-bit PCM WAV of `seconds` of silence."""
    count = round(seconds * rate)
    return _wav(b"\x00\x00" * count, rate, len(b"\x00\x00" * count))


def _wav(samples: bytes, rate: int, declared: int) -> bytes:
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
    return (b"RIFF" + struct.pack("<I", min(0xFFFFFFFF, 36 + declared)) + b"WAVE" + b"fmt "
            + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", declared) + samples)


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


# ---------- protocol formats ----------


def sdp(port: int) -> bytes:
    """An SDP description: FFmpeg's sdp demuxer binds UDP `port` (and `port` + 1) on 0.0.0.0 and waits
    for RTP packets without end."""
    return (f"v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=hostile\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n"
            f"m=video {port} RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n").encode()


def hls_playlist(url: str) -> bytes:
    return (f"#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n"
            f"#EXTINF:10.0,\n{url}\n#EXT-X-ENDLIST\n").encode()


def dash_manifest(url: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S" '
            f'minBufferTime="PT2S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">\n'
            f'<Period><AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="100000" '
            f'width="64" height="64" codecs="avc1.42c00a"><BaseURL>{url}</BaseURL>'
            f'<SegmentBase indexRange="0-100"/></Representation></AdaptationSet></Period></MPD>\n').encode()


def ffconcat(*urls: str) -> bytes:
    return ("ffconcat version 1.0\n" + "".join(f"file '{u}'\n" for u in urls)).encode()


def protocol_formats(http_url: str, udp_port: int) -> dict[str, bytes]:
    """Every protocol format by name, each pointing at the test's loopback HTTP server, its UDP port,
    a local file or a nested data URL."""
    inner = data_url(small_mp4(), "video/mp4")
    return {
        "sdp": sdp(udp_port),
        "hls": hls_playlist(f"{http_url}/segment.ts"),
        "hls-local-file": hls_playlist("file:///etc/passwd"),
        "hls-nested-data-url": hls_playlist(inner),
        "dash": dash_manifest(f"{http_url}/video.mp4"),
        "concat": ffconcat(f"{http_url}/a.mp4"),
        "concat-local-file": ffconcat("/etc/hostname"),
        "concat-nested-data-url": ffconcat(inner),
        "nested-data-url": inner.encode(),
    }


# ---------- bombs, truncated and malformed containers ----------


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png_bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG of a few hundred bytes whose header declares width x height RGB pixels (30 GB decoded)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", zlib.compress(bytes(4096)))
            + _png_chunk(b"IEND", b""))


_CONTAINER_BOXES = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf"}


@dataclass
class _Box:
    kind: bytes
    payload: bytes = b""
    children: list[_Box] | None = None

    def to_bytes(self) -> bytes:
        body = b"".join(c.to_bytes() for c in self.children) if self.children is not None else self.payload
        return struct.pack(">I", 8 + len(body)) + self.kind + body

    def find(self, kind: bytes) -> _Box:
        return next(c for c in self.children or [] if c.kind == kind)


def _boxes(data: bytes) -> list[_Box]:
    out, at = [], 0
    while at + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        size = len(data) - at if size == 0 else size
        payload = data[at + 8:at + size]
        out.append(_Box(kind, children=_boxes(payload)) if kind in _CONTAINER_BOXES else _Box(kind, payload))
        at += size
    return out


def _with_duration(payload: bytes, field: int, value: int) -> bytes:
    """A version-0 mvhd, tkhd or mdhd payload with its 32-bit duration (the `field`-th word) set."""
    assert payload[0] == 0, "version 1 headers are not written by PyAV's muxer"
    at = 4 * field
    return payload[:at] + struct.pack(">I", value) + payload[at + 4:]


def _rewritten(data: bytes, edit) -> bytes:
    boxes = _boxes(data)
    moov = next(b for b in boxes if b.kind == b"moov")
    edit(moov)
    return b"".join(b.to_bytes() for b in boxes)


def _declaring(data: bytes, seconds: float) -> bytes:
    """`data` (an MP4 of one track) with its sample times and headers stretched to `seconds`: FFmpeg
    takes a track's length from its sample table, not from its headers alone."""
    def edit(moov: _Box) -> None:
        trak = moov.find(b"trak")
        mdhd = trak.find(b"mdia").find(b"mdhd")
        scale = struct.unpack(">I", mdhd.payload[12:16])[0]
        stbl = trak.find(b"mdia").find(b"minf").find(b"stbl")
        stts = stbl.find(b"stts")
        entries = struct.unpack(">I", stts.payload[4:8])[0]
        count = sum(struct.unpack(">I", stts.payload[8 + 8 * i:12 + 8 * i])[0] for i in range(entries))
        delta = round(seconds * scale / count)
        assert delta <= 0xFFFFFFFF, "too long for one stts delta at this time scale"
        stts.payload = struct.pack(">IIII", 0, 1, count, delta)
        stbl.children = [c for c in stbl.children if c.kind not in (b"ctts", b"sdtp")]
        mdhd.payload = _with_duration(mdhd.payload, 4, min(0xFFFFFFFF, count * delta))
        mvhd = moov.find(b"mvhd")
        movie_scale = struct.unpack(">I", mvhd.payload[12:16])[0]
        mvhd.payload = _with_duration(mvhd.payload, 4, min(0xFFFFFFFF, round(seconds * movie_scale)))
        trak.find(b"tkhd").payload = _with_duration(trak.find(b"tkhd").payload, 5,
                                                    min(0xFFFFFFFF, round(seconds * movie_scale)))
        trak.children = [c for c in trak.children if c.kind != b"edts"]
    return _rewritten(data, edit)


def mp4_declaring(seconds: float) -> bytes:
    """A small valid MP4 video whose sample times and headers say it lasts `seconds`."""
    return _declaring(small_mp4(), seconds)


def m4a_declaring(seconds: float) -> bytes:
    """A small valid M4A (AAC) whose sample times and headers say it lasts `seconds`."""
    return _declaring(small_m4a(), seconds)


def mp4_of_frames(frames: int, fps: int = 8) -> bytes:
    """A small MP4 whose sample tables declare `frames` frames of one byte each (all in one chunk,
    the durations to match): a few hundred bytes of tables for millions of frames."""
    def edit(moov: _Box) -> None:
        trak = moov.find(b"trak")
        mdhd = trak.find(b"mdia").find(b"mdhd")
        scale = struct.unpack(">I", mdhd.payload[12:16])[0]
        delta = scale // fps
        mdhd.payload = _with_duration(mdhd.payload, 4, min(0xFFFFFFFF, frames * delta))
        stbl = trak.find(b"mdia").find(b"minf").find(b"stbl")
        first = struct.unpack(">I", stbl.find(b"stco").payload[8:12])[0]
        tables = {
            b"stts": struct.pack(">IIII", 0, 1, frames, delta),
            b"stsc": struct.pack(">IIIII", 0, 1, 1, frames, 1),
            b"stsz": struct.pack(">III", 0, 1, frames),
            b"stco": struct.pack(">III", 0, 1, first),
        }
        stbl.children = [(_Box(c.kind, tables[c.kind]) if c.kind in tables else c) for c in stbl.children
                         if c.kind not in (b"stss", b"ctts", b"sdtp")]
        mvhd = moov.find(b"mvhd")
        movie_scale = struct.unpack(">I", mvhd.payload[12:16])[0]
        mvhd.payload = _with_duration(mvhd.payload, 4, min(0xFFFFFFFF, frames * movie_scale // fps))
        trak.children = [c for c in trak.children if c.kind != b"edts"]
    return _rewritten(small_mp4(), edit)


def wav_declaring(seconds: float, rate: int = 8000) -> bytes:
    """A WAV of a kilobyte of samples whose header declares `seconds` of them."""
    return _wav(bytes(1024), rate, min(0xFFFFFFFF - 36, round(seconds * rate * 2)))


def truncated_mp4() -> bytes:
    """The first half of a valid MP4: media data without the moov that describes it."""
    data = small_mp4()
    return data[:len(data) // 2]


def malformed_mp4() -> bytes:
    """A valid MP4 whose sample tables point past the end of the file."""
    def edit(moov: _Box) -> None:
        stbl = moov.find(b"trak").find(b"mdia").find(b"minf").find(b"stbl")
        stco = stbl.find(b"stco")
        count = struct.unpack(">I", stco.payload[4:8])[0]
        stco.payload = stco.payload[:8] + struct.pack(">I", 0x7FFF0000) * count
    return _rewritten(small_mp4(), edit)


def malformed_media() -> dict[str, bytes]:
    """Containers that are broken or lie about their size, by name."""
    return {
        "truncated-mp4": truncated_mp4(),
        "malformed-mp4": malformed_mp4(),
        "mp4-of-hours": mp4_declaring(5 * 3600),
        "m4a-of-hours": m4a_declaring(5 * 3600),
        "mp4-of-millions-of-frames": mp4_of_frames(20_000_000),
        "wav-of-hours": wav_declaring(6 * 3600),
        "garbage": b"\x00\x01garbage" * 200,
        "ftyp-only": b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom",
    }


# ---------- watchers: was a socket opened? ----------


class ConnectionCounter:
    """A loopback TCP server that counts the connections it is given (and answers none of them)."""

    def __init__(self) -> None:
        self.connections = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.1)
        self.port = self._server.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._server.close()


@contextmanager
def connection_counter() -> Iterator[ConnectionCounter]:
    counter = ConnectionCounter()
    try:
        yield counter
    finally:
        counter.close()


def free_udp_port() -> int:
    """An even UDP port nothing is bound to, with the next one free too (RTP and RTCP)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(("0.0.0.0", 0))
            port = probe.getsockname()[1] & ~1
        if not udp_port_bound(port) and not udp_port_bound(port + 1):
            return port
    raise RuntimeError("no free pair of UDP ports")


def udp_port_bound(port: int) -> bool:
    """Whether any socket of this machine is bound to UDP `port` (the kernel's tables)."""
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as lines:
                next(lines)
                for line in lines:
                    local = line.split()[1]
                    if int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except FileNotFoundError:
            continue
    return False


class UdpWatch:
    """Watches a UDP port in a thread until stopped; `seen` says whether anything bound it meanwhile."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.seen = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.seen = self.seen or udp_port_bound(self.port) or udp_port_bound(self.port + 1)
            self._stop.wait(0.005)

    def stop(self) -> bool:
        self._stop.set()
        self._thread.join(5)
        self.seen = self.seen or udp_port_bound(self.port) or udp_port_bound(self.port + 1)
        return self.seen


# ---------- every open guarded ----------


@dataclass
class AvOpen:
    source: object
    kwargs: dict

    @property
    def guarded(self) -> bool:
        """Opened for reading as `dailies.spec.media.open_untrusted` opens: only the file protocol,
        a list of demuxers, a time limit."""
        options = self.kwargs.get("container_options") or self.kwargs.get("options") or {}
        return (options.get("protocol_whitelist") == "file" and bool(options.get("format_whitelist"))
                and self.kwargs.get("timeout") is not None)


def record_av_opens(monkeypatch) -> list[AvOpen]:
    """Every `av.open` for reading made from now on (the call goes through), with its arguments."""
    real = av.open
    opens: list[AvOpen] = []

    def recording(file, mode="r", **kwargs):
        if mode == "r":
            opens.append(AvOpen(file, kwargs))
        return real(file, mode, **kwargs)

    monkeypatch.setattr(av, "open", recording)
    return opens
