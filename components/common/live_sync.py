"""A live session in the timecode player (components/common/timecode_player.py): the presenter's player
posts what it shows to the service, a follower's player shows what the presenter's shows.

Both talk to the service from the browser (`/dailies/v1/live/{id}`, tokens only, never a key), so a
dashboard process that dies takes nothing with it: the players go on, and a page reloaded finds the
session where it is. The presenter's player looks at itself ten times a second and posts what changed
(at once on play, pause, a seek or a speed), and every two seconds while playing. A follower asks for
anything newer than what it has (a long poll) and places itself: the version, paused on the presenter's
frame, or playing at the presenter's time moved on by the time since (on the service's clock), put
right when more than a quarter of a second apart; the drawing being made; the pointer. A presenter
whose token is refused (the session was handed over) follows from then on, and tells the page, whose
next run asks whether this person presents now.
"""

from __future__ import annotations

POINTER_HTML = '<div class="tp-pointer" hidden></div>'
BANNER_HTML = '<div class="tp-live" hidden></div>'

CSS = """
.tp-pointer { position: absolute; width: 14px; height: 14px; margin: -7px 0 0 -7px; border-radius: 50%;
  background: #ff3b30; box-shadow: 0 0 0 3px rgba(255, 59, 48, .35); pointer-events: none; z-index: 3; }
.tp-live { font-size: .8rem; color: var(--st-text-color); opacity: .8; padding: .2rem 0; }
/* Comments are made on Review; a follower's player is driven by the presenter's. */
.tp-live-present .tp-comment, .tp-live-follow .tp-comment, .tp-live-follow .tp-step, .tp-live-follow .tp-speed,
.tp-live-follow .tp-draw, .tp-live-follow .tp-tools { display: none; }
"""

JS = r"""
// A playing follower a little off (more than `near`) catches up by playing a tenth faster or slower, which
// nobody sees; one further off than `far` is sought to the presenter's time and `lead` ahead of it (about
// what a seek takes to show its frame), which stalls it a moment.
const LIVE = { tick: 100, heartbeat: 2000, near: 0.04, far: 0.3, lead: 0.06, nudge: 0.1, correct: 100 };

function liveSleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

function liveSnapshot(m) {
    const video = m.video;
    const playing = !video.paused && !video.ended;
    // While a seek is under way the frame asked for is not on screen yet: it is the one its time falls in.
    const frame = playing ? null : video.seeking ? Math.floor(video.currentTime * m.fps + 1e-6) : m.shown;
    return { version: m.liveConfig.version, playing, time: video.currentTime || 0, at: Date.now(),
             rate: video.playbackRate || 1, frame, shapes: [...m.shapes],
             pointer: m.livePointer || null };
}

function liveSignature(s) {
    return JSON.stringify([s.version, s.playing, s.playing ? null : Math.round(s.time * 1000), s.rate, s.frame,
                           s.shapes, s.pointer]);
}

async function livePresent(m) {
    const video = m.video;
    let lastSent = 0, lastSig = "";
    if (!m.livePresentWired) {  // once per player, however often it presents again
        m.livePresentWired = true;
        // Play, pause, a seek or a speed is posted at once, not at the next look.
        const urgent = () => { m.liveUrgent = true; if (m.liveKick) m.liveKick(); };
        for (const name of ["play", "pause", "seeked", "ratechange"]) video.addEventListener(name, urgent);
        const stage = m.root.querySelector(".tp-stage");
        stage.addEventListener("mousemove", (event) => {
            const box = pictureBox(video), area = stage.getBoundingClientRect();
            const x = (event.clientX - area.left - box.x) / box.w, y = (event.clientY - area.top - box.y) / box.h;
            m.livePointer = x >= 0 && x <= 1 && y >= 0 && y <= 1 ? { x, y } : null;
        });
        stage.addEventListener("mouseleave", () => { m.livePointer = null; });
    }
    while (m.liveRole === "present" && !m.liveStopped) {
        const s = liveSnapshot(m), sig = liveSignature(s), now = Date.now();
        if (m.liveUrgent || sig !== lastSig || (s.playing && now - lastSent > LIVE.heartbeat)) {
            m.liveUrgent = false;
            lastSig = sig; lastSent = now;
            try {
                const answer = await fetch(m.liveConfig.state_url, { method: "POST", cache: "no-store",
                    headers: { "Content-Type": "text/plain" },
                    body: JSON.stringify({ token: m.liveConfig.control_token, state: s }) });
                if (answer.status === 403 || answer.status === 409) {  // handed over, or ended: follow
                    m.liveRole = "follow";
                    m.root.dataset.liveRole = "follow";
                    m.root.classList.replace("tp-live-present", "tp-live-follow");
                    m.api.setTriggerValue("live_lost", true);
                    liveFollow(m);
                    return;
                }
                if (answer.ok) m.root.dataset.liveSeq = String((await answer.json()).seq);
            } catch (e) { lastSig = ""; await liveSleep(500); }  // no answer: sent again
        }
        await Promise.race([liveSleep(LIVE.tick), new Promise((r) => { m.liveKick = r; })]);
        m.liveKick = null;
    }
}

function livePlaced(m, s) {
    if (!s.playing) return s.time;
    return s.time + Math.max(0, Date.now() + (m.liveOffset || 0) - s.at) / 1000 * s.rate;
}

function liveCorrect(m) {
    const s = m.liveState, video = m.video;
    if (!s || m.liveRole !== "follow") return;
    if (!s.playing) {
        if (video.playbackRate !== s.rate) video.playbackRate = s.rate;
        if (!video.paused) video.pause();
        if (s.frame !== null && m.shown !== s.frame && !video.seeking) seekFrame(video, s.frame, m.fps);
    } else {
        const want = livePlaced(m, s), behind = want - video.currentTime;
        let rate = s.rate;
        if (video.paused) {
            video.currentTime = want + LIVE.lead;
            video.play().catch(() => { video.muted = true; video.play().catch(() => {}); });
        } else if (Math.abs(behind) > LIVE.far && !video.seeking) {
            video.currentTime = want + LIVE.lead;
        } else if (Math.abs(behind) > LIVE.near) {
            rate = s.rate * (behind > 0 ? 1 + LIVE.nudge : 1 - LIVE.nudge);
        }
        if (video.playbackRate !== rate) video.playbackRate = rate;
    }
    const pointer = m.root.querySelector(".tp-pointer");
    if (s.pointer) {
        const box = pictureBox(video);
        pointer.style.left = `${box.x + s.pointer.x * box.w}px`;
        pointer.style.top = `${box.y + s.pointer.y * box.h}px`;
        pointer.hidden = false;
    } else pointer.hidden = true;
}

function liveApply(m, answer) {
    m.root.dataset.liveSeq = String(answer.seq);
    m.root.dataset.livePresenter = answer.presenter;
    const banner = m.root.querySelector(".tp-live");
    banner.hidden = false;
    banner.textContent = answer.ended ? "The session has ended." : `Following ${answer.presenter}`;
    if (answer.presenter !== m.liveConfig.presenter) {  // handed over: the page asks who presents now
        m.liveConfig.presenter = answer.presenter;
        m.api.setTriggerValue("live_presenter", answer.presenter);
    }
    const s = answer.state;
    if (!s) return;
    if (s.version !== m.root.dataset.liveVersion) {
        const version = (m.liveConfig.versions || []).find((v) => v.task_id === s.version);
        if (version && version.video_url) {
            video_src(m, version.video_url);
            m.fps = version.fps || m.fps;
        }
        m.root.dataset.liveVersion = s.version;
    }
    m.liveState = s;
    m.shownShapes = s.shapes || []; m.shapes = [];
    renderInk(m);
    liveCorrect(m);
}

function video_src(m, url) {
    if (m.video.getAttribute("src") !== url) m.video.setAttribute("src", url);
}

async function liveFollow(m) {
    if (m.liveFollowing) return;
    m.liveFollowing = true;
    let seq = -1;
    const corrector = setInterval(() => liveCorrect(m), LIVE.correct);
    if (!m.liveFollowWired) {
        m.liveFollowWired = true;
        // A state that came while a seek was under way is placed as soon as it is done.
        m.video.addEventListener("seeked", () => liveCorrect(m));
    }
    try {
        while (m.liveRole === "follow" && !m.liveStopped) {
            const url = `${m.liveConfig.follow_url}?token=${encodeURIComponent(m.liveConfig.follow_token)}` +
                        `&after=${seq}&wait=20`;
            try {
                const answer = await fetch(url, { cache: "no-store" });
                if (!answer.ok) { await liveSleep(1000); continue; }
                const body = await answer.json();
                if (m.liveRole !== "follow") break;  // became the presenter while this was asked
                // The service's clock against ours: its answer left it a few milliseconds ago.
                m.liveOffset = body.server_time - Date.now();
                seq = body.seq;
                liveApply(m, body);
                if (body.ended) break;
            } catch (e) { await liveSleep(1000); }
        }
    } finally {
        clearInterval(corrector);
        m.liveFollowing = false;
    }
}

function liveStart(m, config) {
    const starting = !m.liveConfig;
    if (!starting && config.version !== m.liveConfig.version) {  // a drawing belongs to its version's frame
        m.shapes = []; m.shownShapes = []; renderInk(m);
    }
    m.liveConfig = { ...(m.liveConfig || {}), ...config };
    m.root.dataset.liveRole = config.role;
    m.root.classList.toggle("tp-live-present", config.role === "present");
    m.root.classList.toggle("tp-live-follow", config.role === "follow");
    if (!starting && m.liveRole === config.role) return;
    m.liveRole = config.role;
    if (config.role === "present") {
        m.shownShapes = []; renderInk(m);  // the last presenter's drawing was theirs
        m.root.querySelector(".tp-live").hidden = true;
        m.root.querySelector(".tp-pointer").hidden = true;
        m.root.dataset.liveVersion = config.version;
        livePresent(m);
    } else liveFollow(m);
}
"""
