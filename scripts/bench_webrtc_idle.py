"""What an idle WebRTC reply stream costs the gateway: CPU per second of a person's time while no
agent speaks, with a silent frame in every 20 ms slot (as before issue 40) and with the idle
slots :class:`gateway.audio.playout.IdleSilence` leaves empty (a 200 ms tail, then a keep-alive
every 400 ms).

The gateway's end (:class:`gateway.server.webrtc.WebRTCLink` and its
:class:`~gateway.audio.playout.Playout`) runs in this process; the listener (an aiortc peer
that only receives) in a child process, so this process's CPU time is the gateway's alone.
Loopback only. Run it alone on the machine (it measures CPU):

    flock /tmp/bench.lock .venv/bin/python scripts/bench_webrtc_idle.py --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time

from gateway.audio.playout import KEEP_ALIVE, IdleSilence, Playout
from gateway.server.webrtc import WEBRTC_RATE, WebRTCLink

#: The listener: offers a receive-only audio stream, prints the offer, reads the answer, and
#: counts the frames it hears until its stdin closes.
LISTENER = r"""
import asyncio, json, sys
from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

async def main():
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTransceiver("audio", direction="recvonly")
    heard = [0]

    @pc.on("track")
    def on_track(track):
        async def hear():
            while True:
                try:
                    await track.recv()
                except MediaStreamError:
                    return
                heard[0] += 1
        asyncio.ensure_future(hear())

    await pc.setLocalDescription(await pc.createOffer())
    print(json.dumps({"sdp": pc.localDescription.sdp}), flush=True)
    loop = asyncio.get_running_loop()
    answer = json.loads(await loop.run_in_executor(None, sys.stdin.readline))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
    await loop.run_in_executor(None, sys.stdin.readline)  # until told to stop
    print(json.dumps({"heard": heard[0]}), flush=True)
    await pc.close()

asyncio.run(main())
"""


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure(idle: IdleSilence, seconds: float) -> dict[str, float]:
    """One idle stream for ``seconds`` after it connected: the gateway's CPU and what it sent."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        LISTENER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    playout = Playout(WEBRTC_RATE, fill_silence=True, idle=idle)
    link = WebRTCLink(playout, lambda pcm: None)
    try:
        offer = json.loads(await child.stdout.readline())
        answer = await link.answer(offer["sdp"])
        child.stdin.write((json.dumps({"sdp": answer}) + "\n").encode())
        await child.stdin.drain()
        deadline = time.monotonic() + 20
        while link.pc.connectionState != "connected":
            if time.monotonic() > deadline:
                raise TimeoutError("the listener did not connect")
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.0)  # past the first frames and the tail
        start_cpu, start = cpu_s(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu, elapsed = cpu_s() - start_cpu, time.monotonic() - start
        child.stdin.write(b"stop\n")
        await child.stdin.drain()
        heard = json.loads(await child.stdout.readline())["heard"]
    finally:
        await link.close()
        playout.close()
        if child.returncode is None:
            child.kill()
        await child.wait()
    return {
        "cpuMsPerS": round(1000 * cpu / elapsed, 1),
        "framesHeard": heard,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20, help="idle time measured (20)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    rows = {
        "a frame every 20 ms": await measure(IdleSilence(tail=0, every=1), args.seconds),
        "tail, then keep-alives": await measure(KEEP_ALIVE, args.seconds),
    }
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"idle reply stream, {args.seconds:.0f} s after connecting (the gateway's end only)")
    print("| idle frames | gateway CPU-ms per second | frames the listener heard |")
    print("|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {row['cpuMsPerS']} | {row['framesHeard']} |")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
