#!/usr/bin/env python3
"""One public change a second, as people make them: signs in on the site and follows, then unfollows,
a listing each second (a follow is an engagement change: it drops that listing's cached reads and the
lists ranked by engagement). Runs until killed; prints how many changes it made.
Usage: churn.py PORT EMAIL PASSWORD SLUGS_FILE"""
import http.client, random, re, signal, sys, time

port, email, password, slugs_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
slugs = open(slugs_file).read().split()
cookies = {}


def request(method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items()), "User-Agent": "launchdir-bench churn"}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    for k, v in r.getheaders():
        if k.lower() == "set-cookie":
            name, value = v.split(";", 1)[0].split("=", 1)
            cookies[name] = value
    text = r.read().decode("utf-8", "replace")
    return r.status, text


def hidden(html, name):
    m = re.search(r'name="%s" value="([^"]*)"' % name, html)
    return m.group(1) if m else ""


from urllib.parse import urlencode

_, form = request("GET", "/signin")
status, _ = request("POST", "/signin", urlencode({"email": email, "password": password, "csrf": hidden(form, "csrf")}))
assert status == 303, f"sign-in answered {status}"
made = 0
stop = False


def done(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, done)
random.seed(11)
while not stop:
    slug = random.choice(slugs)
    _, page = request("GET", f"/listings/{slug}")
    csrf = hidden(page, "csrf")
    for on in ("1", "0"):
        if stop:
            break
        t = time.time()
        status, _ = request("POST", f"/listings/{slug}/follow", urlencode({"csrf": csrf, "on": on}))
        if status == 303:
            made += 1
        time.sleep(max(0.0, 1.0 - (time.time() - t)))
print(f"churn: {made} public changes (follows and unfollows), one a second")
