"""The messages between a step and the warm-start server (runtime/warm_start.py, runtime/warm_start_server.py):
one newline-ended JSON object each, the step's standard streams passed with the first."""

from __future__ import annotations

import array
import json
import socket


def send_message(connection: socket.socket, message: dict, fds: list[int] = ()) -> None:
    payload = json.dumps(message).encode() + b"\n"
    if fds:
        connection.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        connection.sendall(payload)


def receive_message(connection: socket.socket) -> tuple[dict | None, list[int]]:
    """One newline-ended JSON message (None when the peer closed first) and the file descriptors sent with it."""
    data, fds, size = b"", [], array.array("i").itemsize
    while not data.endswith(b"\n"):
        try:
            chunk, ancillary, _flags, _address = connection.recvmsg(65536, socket.CMSG_SPACE(3 * size))
        except OSError:
            return None, fds
        for level, kind, item in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", item[: len(item) - len(item) % size]))
        if not chunk:
            return None, fds
        data += chunk
    return json.loads(data), fds
