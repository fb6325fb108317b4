#!/usr/bin/python3
"""The household page in a real browser (SPEC §9a), end to end.

Two network namespaces stand for two devices of a household, a kid's phone and a parent's laptop,
each on a veth pair into a bridge of the root namespace, where the real helper runs under
libfaketime at 06:30 UTC. Headless Chromium, driven by Selenium through chromedriver, runs inside
each namespace in turn:

1. kid: the page shows instagram blocked until 07:00 with the schedule's reason; the moment of
   temptation shows the kid's plan and alternatives; the 2-minute exercise starts and the kid
   leaves it ("bypass avoided", recorded like the terminal flow); the kid asks for 15 minutes.
2. parent: signs in as owner `nobody` (uid 65534, owner of the kid's profile) and approves; tries
   to remove the kid's schedule, which its cooldown refuses in the engine's words.
3. kid: takes the 15 minutes; `dig` from the kid's namespace now answers instagram, while the
   parent's, whose profile blocks it too, still gets 0.0.0.0.
4. kid, live (the page's event stream and /live.js): with the page left open, the grant's
   countdown ticks; the grant is stopped and instagram flips back to blocked; a new request and its
   answer appear; all in the same document, never reloaded.
5. parent: pauses the kid's profile from the page (45 min, "dinner"): `dig` from the kid's
   namespace gets 0.0.0.0 for every name and the kid's page says "Paused until", the parent's does
   not change; Resume lifts it. With the owner's page left open, the kid asks for time and the
   request appears on it without a reload.

A screenshot of each page goes to --out. Namespaces, links and processes are removed on every exit.

    /usr/bin/python3 scripts/browser/household_browser.py --dns .build/debug/scrolloff-dns \\
        --cli .build/debug/scrolloff --out docs/screenshots
"""
import argparse
import atexit
import datetime
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

OWNER = "nobody"
PASSWORD = "correct horse battery"
ANSWER = "203.0.113.7"  # TEST-NET-3 (RFC 5737): the fake upstream's answer, never contacted.


def sh(*args, check=True, **kwargs):
    result = subprocess.run(list(args), capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{result.stdout}{result.stderr}")
    return result


class Network:
    """A bridge in the root namespace and one namespace per device, cleaned up however we exit."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.subnet = f"10.231.{20 + os.getpid() % 200}"
        self.bridge = f"sobr{tag}"
        self.devices = {"kid": (f"sokid{tag}", f"sokh{tag}", f"sokn{tag}", f"{self.subnet}.2"),
                        "parent": (f"sopar{tag}", f"soph{tag}", f"sopn{tag}", f"{self.subnet}.3")}
        self.host = f"{self.subnet}.1"
        atexit.register(self.remove)

    def create(self):
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        sh("ip", "addr", "add", f"{self.host}/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for namespace, host_end, ns_end, address in self.devices.values():
            sh("ip", "netns", "add", namespace)
            sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", ns_end)
            sh("ip", "link", "set", host_end, "master", self.bridge)
            sh("ip", "link", "set", host_end, "up")
            sh("ip", "link", "set", ns_end, "netns", namespace)
            sh("ip", "-n", namespace, "addr", "add", f"{address}/24", "dev", ns_end)
            sh("ip", "-n", namespace, "link", "set", ns_end, "up")
            sh("ip", "-n", namespace, "link", "set", "lo", "up")

    def remove(self):
        for namespace, host_end, _, _ in self.devices.values():
            sh("ip", "netns", "del", namespace, check=False)
            sh("ip", "link", "del", host_end, check=False)
        sh("ip", "link", "del", self.bridge, check=False)

    def run_in(self, device, *args, **kwargs):
        return sh("ip", "netns", "exec", self.devices[device][0], *args, **kwargs)


def fake_upstream():
    """A resolver on 127.0.0.1 that answers every A question with ANSWER: what "the internet"
    says about instagram once the helper lets the kid's query through."""
    import dns.message
    import dns.rdatatype
    import dns.rrset
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))

    def serve():
        while True:
            data, peer = server.recvfrom(4096)
            try:
                query = dns.message.from_wire(data)
            except Exception:
                continue
            response = dns.message.make_response(query)
            question = query.question[0]
            if question.rdtype == dns.rdatatype.A:
                response.answer.append(dns.rrset.from_text(question.name, 60, "IN", "A", ANSWER))
            server.sendto(response.to_wire(), peer)

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


class Helper:
    def __init__(self, dns_binary, cli_binary, network, folder):
        self.cli_binary = cli_binary
        self.state = os.path.join(folder, "state")
        self.socket = os.path.join(folder, "control.sock")
        config = os.path.join(folder, "scrolloff.toml")
        kid, parent = network.devices["kid"][3], network.devices["parent"][3]
        with open(config, "w") as f:
            f.write(f'[profile]\ntime_zone = "UTC"\n\n'
                    f'[[profiles]]\nname = "kid"\nclients = ["{kid}/32"]\nowners = [65534]\ntime_zone = "UTC"\n'
                    # Tokens, so the page offers one (it offers nothing that would be refused).
                    f'knobs = {{ tokens_per_month = 3 }}\n\n'
                    f'[[profiles]]\nname = "parent"\nclients = ["{parent}/32"]\ntime_zone = "UTC"\n')
        sh(dns_binary, "web", "passwd", OWNER, "--state-dir", self.state, input=PASSWORD + "\n")
        # Tomorrow 06:30 UTC, ticking: later than any build date, so the helper trusts it (SPEC §11).
        tomorrow = datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=1)
        env = dict(os.environ, TZ="UTC", LD_PRELOAD="/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                   FAKETIME=f"@{tomorrow.isoformat()} 06:30:00",
                   # See Tests/EndToEndTests/RestartableHelper.swift: no shared segment, or argv is lost.
                   FAKETIME_SHARED="/scrolloff-e2e-none /scrolloff-e2e-none")
        self.log = open(os.path.join(folder, "helper.err"), "w")
        self.process = subprocess.Popen(
            [dns_binary, "start", "--config", config, "--listen", f"{network.host}:0",
             "--upstream", f"127.0.0.1:{fake_upstream()}", "--state-dir", self.state, "--control-socket", self.socket,
             "--web-listen", f"{network.host}:0"],
            stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
        atexit.register(self.stop)
        self.dns_port = self.web_port = None
        deadline = time.time() + 60
        while time.time() < deadline and (self.dns_port is None or self.web_port is None):
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the helper stopped: " + open(self.log.name).read())
            if line.startswith("listening udp "):
                self.dns_port = int(line.rsplit(":", 1)[1])
            if line.startswith("listening web "):
                self.web_port = int(line.rsplit(":", 1)[1])
        if self.web_port is None:
            raise SystemExit("the helper did not announce its web listener")

    def cli(self, *args):
        return sh(self.cli_binary, *args, "--socket", self.socket)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


# ---- The browser side, run inside a device's namespace -------------------------------------------

def browser(folder):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=420,1150", f"--user-data-dir={folder}", "--no-first-run"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def navigate(driver, element):
    """Clicks `element` and waits until the next page has replaced this one and finished loading."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait
    old = driver.find_element("tag name", "html")
    element.click()

    def replaced(_):
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            # Stale, or chromedriver's "Node with given id does not belong to the document",
            # which it says instead while the old document is being torn down (seen in CI).
            return True

    WebDriverWait(driver, 20).until(replaced)
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")


def expect(condition, what, driver=None):
    if not condition:
        text = driver.find_element("tag name", "body").text if driver else ""
        raise SystemExit(f"FAILED: {what}\n--- page ---\n{text}")


# ---- Accessibility: axe-core on every page, both themes, a phone's width and a laptop's ------------

THEMES = ("light", "dark")
WIDTHS = (390, 1280)
# axe-core's impacts that fail the test (WCAG 2.1 AA: no serious or critical violation).
FAILING = ("serious", "critical")


def audit(driver, name, out):
    """Runs axe-core (bundled by selenium-axe-python) on the page shown, in each theme at each
    width, and checks that the header does not wrap at 390 px. What it finds is appended to
    `axe-<name>.txt` in `out`; the main process counts them all and fails on any."""
    from selenium_axe_python import Axe
    found = []
    # axe-core takes seconds on a loaded machine; Selenium waits 30 s for a script by default.
    driver.set_script_timeout(180)
    try:
        for theme in THEMES:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": theme}]})
            for width in WIDTHS:
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                       {"width": width, "height": 844, "deviceScaleFactor": 1, "mobile": width < 600})
                Axe(driver).inject()
                # WCAG 2.0 and 2.1, A and AA (contrast, names, labels, structure) and axe's best
                # practices; a failure of axe itself is reported, not waited for.
                results = driver.execute_async_script(
                    "var done = arguments[arguments.length - 1];"
                    "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
                    ".then(function (r) { done(r) }, function (e) { done({error: String(e)}) })")
                expect("error" not in results, f"axe-core ran on {name}: {results.get('error')}", driver)
                for violation in results["violations"]:
                    if violation.get("impact") in FAILING:
                        targets = "; ".join(" ".join(node["target"]) for node in violation["nodes"][:4])
                        found.append(f"{name} {theme} {width}px: {violation['impact']} {violation['id']} "
                                     f"({len(violation['nodes'])}): {violation['help']} at {targets}")
                if width == 390:
                    wraps = driver.execute_script(
                        "var h=document.querySelector('header');if(!h)return false;var kids=h.querySelectorAll('strong, nav a');"
                        "var top=null;for(var i=0;i<kids.length;i++){var t=kids[i].getBoundingClientRect().top;"
                        "if(top===null)top=t;else if(Math.abs(t-top)>4)return true}return h.scrollWidth>h.clientWidth+1")
                    if wraps:
                        found.append(f"{name} {theme} {width}px: serious header-wrap (1): the header wraps or overflows at 390 px")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    with open(os.path.join(out, f"axe-{name}.txt"), "w") as f:
        f.write("".join(line + "\n" for line in found))


def kid_asks(driver, base, out):
    from selenium.webdriver.common.by import By
    if True:
        driver.get(base + "/")
        entry = driver.find_element(By.ID, "entry-instagram")
        expect(entry.get_attribute("data-state") == "blocked", "instagram is blocked on the kid's page", driver)
        expect("opens at 07:00" in entry.text, "blocked, opens at 07:00", driver)
        expect("sleep before school" in entry.text, "the schedule's reason is shown", driver)
        driver.save_screenshot(os.path.join(out, "kid-blocked.png"))
        audit(driver, "kid-home", out)

        # SPEC §7: the week as server-drawn charts; the dig before this step was today's urge.
        charts = driver.find_element(By.CSS_SELECTOR, ".charts")
        days = charts.find_elements(By.CSS_SELECTOR, "svg.chart.trend g.day")
        expect(len(days) == 7, f"the trend shows 7 days ({len(days)})", driver)
        expect(int(days[-1].get_attribute("data-urges")) >= 1, "today's urge from the dig is on the trend", driver)
        hours = charts.find_elements(By.CSS_SELECTOR, "svg.chart.heatmap rect.hour")
        expect(len(hours) == 24 and sum(int(h.get_attribute("data-urges")) for h in hours) >= 1, "the heatmap has 24 hours and the urge", driver)
        top = charts.find_element(By.CSS_SELECTOR, "svg.chart.top g.entry")
        expect(top.get_attribute("data-entry") == "instagram", "instagram is the top entry", driver)
        label = charts.find_element(By.CSS_SELECTOR, "svg.chart.trend").get_attribute("aria-label")
        expect("resisted" in label and "protected" in label, f"the chart says its numbers in words ({label})", driver)
        driver.execute_script("arguments[0].scrollIntoView()", charts)
        driver.save_screenshot(os.path.join(out, "kid-charts.png"))

        # The moment of temptation: a token is a paid bypass, so the exercise is offered.
        navigate(driver, driver.find_element(By.LINK_TEXT, "Token"))
        body = driver.find_element(By.TAG_NAME, "main").text
        expect("when I'm bored, I will shoot some hoops" in body, "the kid's plan comes first", driver)
        expect("read a chapter" in body, "the alternatives are shown", driver)
        driver.save_screenshot(os.path.join(out, "kid-moment.png"))
        audit(driver, "kid-moment", out)
        navigate(driver, driver.find_element(By.LINK_TEXT, "Start the exercise"))
        time.sleep(2.5)
        left = driver.find_element(By.ID, "left").text
        expect(left.startswith("1:5") or left.startswith("2:5"), f"the calm timer counts down ({left})", driver)
        driver.save_screenshot(os.path.join(out, "kid-exercise.png"))
        audit(driver, "kid-exercise", out)
        navigate(driver, driver.find_element(By.ID, "avoid"))
        expect("stays blocked" in driver.find_element(By.TAG_NAME, "main").text, "leaving it is acknowledged", driver)
        audit(driver, "kid-outcome", out)
        for page in ("history", "plans"):
            driver.get(base + "/" + page)
            audit(driver, "kid-" + page, out)

        # Ask for 15 minutes with a note.
        driver.get(base + "/")
        form = driver.find_element(By.CSS_SELECTOR, "form[action='/ask']")
        minutes = form.find_element(By.NAME, "minutes")
        minutes.clear()
        minutes.send_keys("15")
        form.find_element(By.NAME, "note").send_keys("group chat for the science project")
        navigate(driver, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
        request = driver.find_element(By.CSS_SELECTOR, ".request")
        expect(request.get_attribute("data-status") == "pending", "the request waits for an owner", driver)
        driver.save_screenshot(os.path.join(out, "kid-asked.png"))


def parent_approves(driver, base, out):
    from selenium.webdriver.common.by import By
    if True:
        driver.get(base + "/signin")
        audit(driver, "parent-signin", out)
        driver.find_element(By.NAME, "name").send_keys(OWNER)
        driver.find_element(By.NAME, "password").send_keys(PASSWORD)
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "form[action='/signin'] button"))
        # What needs an answer leads the page; each profile's forms and week are folded.
        request = driver.find_element(By.CSS_SELECTOR, "#needs-answer .request[data-profile='kid']")
        expect("15 min" in request.text and "science project" in request.text, "the owner sees the request", driver)
        expect("1 request waits" in driver.find_element(By.ID, "needs-answer").text, "the request is counted", driver)
        profile = driver.find_element(By.ID, "profile-kid")
        for details in profile.find_elements(By.TAG_NAME, "details"):
            expect(details.get_attribute("open") is None, "the profile's long forms are folded", driver)
        driver.save_screenshot(os.path.join(out, "parent-request.png"))
        for summary in profile.find_elements(By.CSS_SELECTOR, "details > summary"):
            summary.click()
        audit(driver, "parent-owner", out)

        # SPEC §7: the owner sees each member's week as the same charts, in that member's section.
        charts = profile.find_element(By.CSS_SELECTOR, ".charts")
        days = charts.find_elements(By.CSS_SELECTOR, "svg.chart.trend g.day")
        expect(len(days) == 7 and int(days[-1].get_attribute("data-urges")) >= 1, f"the owner sees the kid's 7 days and today's urge ({len(days)})", driver)
        hours = charts.find_elements(By.CSS_SELECTOR, "svg.chart.heatmap rect.hour")
        expect(len(hours) == 24 and sum(int(h.get_attribute("data-urges")) for h in hours) >= 1, "the owner sees the kid's heatmap", driver)
        top = charts.find_element(By.CSS_SELECTOR, "svg.chart.top g.entry")
        expect(top.get_attribute("data-entry") == "instagram", "the owner sees the kid's top entry", driver)
        driver.execute_script("arguments[0].scrollIntoView()", charts)
        driver.save_screenshot(os.path.join(out, "parent-charts.png"))
        driver.execute_script("window.scrollTo(0, 0)")
        request.find_element(By.NAME, "note").send_keys("ok, until 07:00")
        navigate(driver, request.find_element(By.CSS_SELECTOR, "button[value=approve]"))
        profile = driver.find_element(By.ID, "profile-kid")
        expect("17 min" in profile.text, "the kid's balance holds the 15 minutes granted", driver)
        driver.save_screenshot(os.path.join(out, "parent-approved.png"))

        # Loosening from the page meets the same lock as `scrolloff schedule rm`: "night" was added at
        # 06:30, so its 2 h cooldown refuses the removal, and the page says so in the engine's words.
        schedule = profile.find_element(By.CSS_SELECTOR, "li.schedule[data-name='night']")
        expect("locked until" in schedule.text, "the schedule's lock is shown", driver)
        navigate(driver, schedule.find_element(By.XPATH, ".//button[contains(., 'Remove')]"))
        refusal = driver.find_element(By.CSS_SELECTOR, ".refusal")
        expect(refusal.get_attribute("data-rule") == "cooldown" and "can't be loosened" in refusal.text,
               "removing the schedule is refused during its cooldown", driver)
        driver.save_screenshot(os.path.join(out, "parent-schedule-locked.png"))
        audit(driver, "parent-refusal", out)


def kid_takes_time(driver, base, out):
    from selenium.webdriver.common.by import By
    if True:
        driver.get(base + "/")
        request = driver.find_element(By.CSS_SELECTOR, ".request")
        expect(request.get_attribute("data-status") == "approved", "the kid sees the answer", driver)
        entry = driver.find_element(By.ID, "entry-instagram")
        minutes = entry.find_element(By.NAME, "minutes")
        minutes.clear()
        minutes.send_keys("15")
        navigate(driver, entry.find_element(By.XPATH, ".//button[contains(., 'Use minutes')]"))
        navigate(driver, driver.find_element(By.XPATH, "//button[contains(., 'Open instagram for 15 min')]"))
        expect("instagram is open until" in driver.find_element(By.TAG_NAME, "main").text, "instagram is open", driver)
        driver.save_screenshot(os.path.join(out, "kid-open.png"))


def kid_sees_live(driver, base, out):
    """The page left open follows the helper: the main process changes things once this says READY."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(base + "/")
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
    # A mark on this document: a reload would lose it.
    driver.execute_script("window.scrolloffLiveMark = 42")
    grant = driver.find_element(By.CSS_SELECTOR, "[data-left]")
    WebDriverWait(driver, 5).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[data-left] .countdown"))
    first = driver.find_element(By.CSS_SELECTOR, "[data-left] .countdown").text
    time.sleep(2.2)
    second = driver.find_element(By.CSS_SELECTOR, "[data-left] .countdown").text
    expect(first != second and "left" in second, f"the grant's countdown ticks ({first!r} then {second!r})", driver)
    expect("instagram" in grant.text, "the open grant is instagram's", driver)
    driver.save_screenshot(os.path.join(out, "kid-live-countdown.png"))
    print("READY", flush=True)
    # The live updates replace these elements while the waits read them: a read of one replaced
    # between find and attribute is stale, and is read again on the next poll.
    from selenium.common.exceptions import StaleElementReferenceException
    WebDriverWait(driver, 15, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda d: d.find_element(By.ID, "entry-instagram").get_attribute("data-state") == "blocked")
    WebDriverWait(driver, 15, ignored_exceptions=[StaleElementReferenceException]).until(lambda d: any(
        r.get_attribute("data-status") == "approved" and "live answer" in r.text for r in d.find_elements(By.CSS_SELECTOR, ".request")))
    expect(driver.execute_script("return window.scrolloffLiveMark") == 42, "the page changed without a reload", driver)
    driver.save_screenshot(os.path.join(out, "kid-live-updated.png"))


def parent_pauses_and_sees_live(driver, base, out):
    """The owner's Pause and Resume (SPEC §5a), then the owner's page left open shows a new request
    without a reload (SPEC §9a). The main process checks the kid's DNS and page when this says
    PAUSED (and answers with a line on standard input), and makes the kid ask when it says READY."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(base + "/signin")
    driver.find_element(By.NAME, "name").send_keys(OWNER)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    navigate(driver, driver.find_element(By.CSS_SELECTOR, "form[action='/signin'] button"))
    form = driver.find_element(By.CSS_SELECTOR, "#profile-kid form[action='/owner/pause']")
    minutes = form.find_element(By.NAME, "minutes")
    minutes.clear()
    minutes.send_keys("45")
    form.find_element(By.NAME, "reason").send_keys("dinner")
    navigate(driver, form.find_element(By.XPATH, ".//button[contains(., 'Pause')]"))
    profile = driver.find_element(By.ID, "profile-kid")
    expect("Paused until" in profile.text and "dinner" in profile.text, "the owner's page shows the kid's pause", driver)
    expect(not driver.find_elements(By.CSS_SELECTOR, "#profile-parent .pause"), "only the kid is paused", driver)
    driver.save_screenshot(os.path.join(out, "parent-paused.png"))
    print("PAUSED", flush=True)
    sys.stdin.readline()
    navigate(driver, driver.find_element(By.ID, "profile-kid").find_element(By.XPATH, ".//button[contains(., 'Resume now')]"))
    profile = driver.find_element(By.ID, "profile-kid")
    expect("Paused until" not in profile.text and profile.find_elements(By.CSS_SELECTOR, "form[action='/owner/pause']"),
           "resumed: the Pause button is back", driver)
    # A mark on this document: a reload would lose it. Time for live.js to open its stream first.
    driver.execute_script("window.scrolloffLiveMark = 7")
    time.sleep(2)
    print("READY", flush=True)
    from selenium.common.exceptions import StaleElementReferenceException
    WebDriverWait(driver, 15, ignored_exceptions=[StaleElementReferenceException]).until(lambda d: any(
        "owner live" in r.text for r in d.find_elements(By.CSS_SELECTOR, "#needs-answer .request[data-profile='kid']")))
    expect(driver.execute_script("return window.scrolloffLiveMark") == 7, "the owner's page changed without a reload", driver)
    driver.save_screenshot(os.path.join(out, "parent-live-request.png"))


STEPS = {"kid-asks": kid_asks, "parent-approves": parent_approves, "kid-takes-time": kid_takes_time, "kid-sees-live": kid_sees_live,
         "parent-pauses-and-sees-live": parent_pauses_and_sees_live}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dns", help="the scrolloff-dns binary")
    parser.add_argument("--cli", help="the scrolloff binary")
    parser.add_argument("--out", required=True, help="folder for the screenshots")
    parser.add_argument("--step", choices=sorted(STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.step:
        driver = browser(tempfile.mkdtemp(prefix="scrolloff-chromium-"))
        try:
            STEPS[args.step](driver, args.base, args.out)
        except Exception as error:
            # What the browser showed when the step failed, to read and to look at.
            driver.save_screenshot(os.path.join(args.out, f"failed-{args.step}.png"))
            text = driver.find_element("tag name", "body").text
            raise SystemExit(f"FAILED in {args.step}: {error.__class__.__name__}: {str(error).splitlines()[0]}\n"
                             f"--- {driver.current_url} ---\n{text}")
        finally:
            driver.quit()
        return
    if os.geteuid() != 0:
        raise SystemExit("run as root: the test makes network namespaces")
    # SIGTERM (a test runner giving up) still runs the atexit clean-up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    network = Network()
    network.create()
    folder = tempfile.mkdtemp(prefix="scrolloff-browser-")
    atexit.register(shutil.rmtree, folder, True)
    helper = Helper(args.dns, args.cli, network, folder)
    helper.cli("schedule", "add", "night", "--profile", "kid", "--from", "21:00", "--to", "07:00",
               "--entries", "instagram", "--reason", "sleep before school")
    helper.cli("plan", "add", "--profile", "kid", "--when", "I'm bored", "--then", "shoot some hoops")
    helper.cli("alternatives", "add", "--profile", "kid", "read a chapter")
    helper.cli("block", "instagram", "--profile", "parent", "--reason", "deep work")
    base = f"http://{network.host}:{helper.web_port}"

    def dig(device):
        return network.run_in(device, "dig", f"@{network.host}", "-p", str(helper.dns_port), "instagram.com",
                              "+short", "+time=3", "+tries=1").stdout.strip()

    expect(dig("kid") == "0.0.0.0", f"instagram is blocked for the kid before ({dig('kid')})")
    for step, device in (("kid-asks", "kid"), ("parent-approves", "parent"), ("kid-takes-time", "kid")):
        started = time.time()
        result = network.run_in(device, "/usr/bin/python3", os.path.abspath(__file__), "--step", step, "--base", base,
                                "--out", os.path.abspath(args.out), check=False)
        print(f"{step}: exit {result.returncode} after {time.time() - started:.1f} s")
        if result.returncode != 0:
            raise SystemExit(f"{step} failed:\n{result.stdout}{result.stderr}\n--- helper ---\n{open(helper.log.name).read()[-3000:]}")
    expect("night" in helper.cli("schedule", "list", "--profile", "kid").stdout, "the refused removal left the schedule")
    kid, parent = dig("kid"), dig("parent")
    expect(kid == ANSWER, f"dig from the kid's namespace answers instagram ({kid!r})")
    expect(parent == "0.0.0.0", f"dig from the parent's namespace is still blocked ({parent!r})")

    # The page left open on the kid's phone follows what happens, without a reload.
    started = time.time()
    live = subprocess.Popen(["ip", "netns", "exec", network.devices["kid"][0], "/usr/bin/python3", os.path.abspath(__file__),
                             "--step", "kid-sees-live", "--base", base, "--out", os.path.abspath(args.out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = []
    try:
        for line in live.stdout:
            said.append(line)
            if line.strip() == "READY":
                helper.cli("stop", "instagram", "--profile", "kid")
                helper.cli("ask", "5m", "--note", "live answer", "--profile", "kid")
                pending = helper.cli("requests", "list", "--profile", "kid", "--json").stdout
                newest = max(int(r["id"]) for r in __import__("json").loads(pending)["requests"])
                helper.cli("requests", "approve", str(newest), "--note", "fine")
        live.wait(60)
    finally:
        if live.poll() is None:
            live.kill()
            live.wait()
    print(f"kid-sees-live: exit {live.returncode} after {time.time() - started:.1f} s")
    if live.returncode != 0:
        raise SystemExit("kid-sees-live failed:\n" + "".join(said) + f"\n--- helper ---\n{open(helper.log.name).read()[-3000:]}")
    # The owner pauses the kid from the page: every name answers blocked for the kid's phone only,
    # the kid's page says so; Resume lifts it. Then the owner's open page shows a new request live.
    def dig_name(device, name):
        return network.run_in(device, "dig", f"@{network.host}", "-p", str(helper.dns_port), name,
                              "+short", "+time=3", "+tries=1").stdout.strip()

    def kid_page():
        return network.run_in("kid", "curl", "-s", "--max-time", "10", base + "/").stdout

    expect(dig_name("kid", "example.org") == ANSWER, "example.org answers for the kid before the pause")
    started = time.time()
    owner = subprocess.Popen(["ip", "netns", "exec", network.devices["parent"][0], "/usr/bin/python3", os.path.abspath(__file__),
                              "--step", "parent-pauses-and-sees-live", "--base", base, "--out", os.path.abspath(args.out)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = []
    try:
        for line in owner.stdout:
            said.append(line)
            if line.strip() == "PAUSED":
                kid, parent = dig_name("kid", "example.org"), dig_name("parent", "example.org")
                expect(kid == "0.0.0.0", f"paused: example.org is blocked for the kid ({kid!r})")
                expect(parent == ANSWER, f"paused: the parent's phone is not ({parent!r})")
                page = kid_page()
                expect("Paused until" in page and "dinner" in page, "the kid's page shows the pause: " + page[-1500:])
                owner.stdin.write("\n")
                owner.stdin.flush()
            if line.strip() == "READY":
                kid = dig_name("kid", "example.org")
                expect(kid == ANSWER, f"resumed: example.org answers for the kid again ({kid!r})")
                expect("Paused until" not in kid_page(), "resumed: the kid's page no longer shows the pause")
                helper.cli("ask", "10m", "--note", "owner live", "--profile", "kid")
        owner.wait(60)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    print(f"parent-pauses-and-sees-live: exit {owner.returncode} after {time.time() - started:.1f} s")
    if owner.returncode != 0:
        raise SystemExit("parent-pauses-and-sees-live failed:\n" + "".join(said) + f"\n--- helper ---\n{open(helper.log.name).read()[-3000:]}")
    pauses = helper.cli("events", "--profile", "kid", "--json").stdout
    expect(f"web owner {OWNER}" in pauses and '"paused"' in pauses and '"resumed"' in pauses,
           "the pause and the resume are the owner's events: " + pauses[-2000:])

    events = helper.cli("events", "--profile", "kid", "--json").stdout
    # The outcome as the terminal flow records it: an `exercise` event of the avoided kind.
    expect('"kind" : "exercise"' in events and "chose not to open instagram" in events,
           "the exercise's outcome is recorded: " + events[-2000:])
    # Every page's axe-core findings (`audit`), counted over both themes and both widths.
    found = []
    for name in sorted(os.listdir(args.out)):
        if name.startswith("axe-") and name.endswith(".txt"):
            found += [line for line in open(os.path.join(args.out, name)).read().splitlines() if line]
    print(f"axe-core: {len(found)} serious or critical violations")
    for line in found:
        print("  " + line)
    expect(not found, f"axe-core finds no serious or critical violation ({len(found)} found)")
    print("household browser flow: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
