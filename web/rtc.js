// WebRTC audio: one sendrecv Opus transceiver, signalled over the gateway's WebSocket.

/** How long to wait for ICE gathering: the server does not trickle, so the offer must carry
 * the candidates; host candidates come in milliseconds, a missing STUN server can hang. */
const GATHER_TIMEOUT_MS = 3000;

/** How long the peer connection may take to connect before the page falls back to WebSocket. */
export const CONNECT_TIMEOUT_MS = 10000;

function gatheringComplete(pc) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      pc.removeEventListener("icegatheringstatechange", check);
      resolve();
    };
    const check = () => {
      if (pc.iceGatheringState === "complete") done();
    };
    const timer = setTimeout(done, GATHER_TIMEOUT_MS);
    pc.addEventListener("icegatheringstatechange", check);
  });
}

/**
 * A peer connection sending `track` and playing what comes back into `remoteStream`.
 * Resolves with the connection and the complete offer SDP to send to the server.
 */
export async function createOffer(track, remoteStream) {
  const pc = new RTCPeerConnection({ bundlePolicy: "max-bundle" });
  pc.addTransceiver(track, { direction: "sendrecv" });
  pc.addEventListener("track", (e) => {
    for (const old of remoteStream.getAudioTracks()) remoteStream.removeTrack(old);
    remoteStream.addTrack(e.track);
  });
  await pc.setLocalDescription(await pc.createOffer());
  await gatheringComplete(pc);
  return { pc, sdp: pc.localDescription.sdp };
}

/** Resolves when `pc` connects; rejects when it fails or takes longer than `timeoutMs`. */
export function connected(pc, timeoutMs = CONNECT_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const finish = (error) => {
      clearTimeout(timer);
      pc.removeEventListener("connectionstatechange", check);
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (pc.connectionState === "connected") finish();
      else if (pc.connectionState === "failed" || pc.connectionState === "closed") {
        finish(new Error(`WebRTC connection ${pc.connectionState}`));
      }
    };
    const timer = setTimeout(
      () => finish(new Error(`WebRTC did not connect within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    pc.addEventListener("connectionstatechange", check);
    check();
  });
}

/** Sum of `totalAudioEnergy` over the inbound audio streams of `pc` (0 when none yet). */
export async function inboundAudioEnergy(pc) {
  let energy = 0;
  const stats = await pc.getStats();
  stats.forEach((report) => {
    if (report.type === "inbound-rtp" && report.kind === "audio") {
      energy += report.totalAudioEnergy || 0;
    }
  });
  return energy;
}
