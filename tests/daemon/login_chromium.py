#!/usr/bin/python3
"""Signs in to a daemon's report pages in headless Chromium, as a person would.

  login_chromium.py BASE_URL TOKEN SCREENSHOT_DIR

Opens BASE_URL/reports/history (reads are protected: it lands on the sign-in form), types a wrong
token (the form says so), then the right one (back to the timeline), checks that scripts cannot
read the session cookie (HttpOnly), follows the navigation to the report index, and saves
screenshots of the form and the page after it. Prints what failed and exits 1; 0 when all held.
Exits 77 (skipped) without Selenium or chromedriver.
"""
import os
import shutil
import sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    print("skipped: no python3-selenium")
    sys.exit(77)

base, token, shots = sys.argv[1], sys.argv[2], sys.argv[3]
driver_path = shutil.which("chromedriver")
if driver_path is None:
    print("skipped: no chromedriver")
    sys.exit(77)

options = Options()
options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,800",
            "--no-first-run", "--disable-extensions"):
    options.add_argument(arg)
driver = webdriver.Chrome(service=Service(driver_path), options=options)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


try:
    driver.get(base + "/reports/history")
    check("/login?next=" in driver.current_url, "not sent to sign in: " + driver.current_url)
    check(driver.title.startswith("Sign in"), "the form's title: " + driver.title)
    driver.save_screenshot(os.path.join(shots, "login-form.png"))

    driver.find_element(By.ID, "token").send_keys("not-the-token")
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    try:
        WebDriverWait(driver, 10).until(
            lambda d: "not this server's token" in d.find_element(By.TAG_NAME, "body").text)
    except Exception:
        pass
    check("not this server's token" in driver.find_element(By.TAG_NAME, "body").text,
          "a wrong token is not said so")
    driver.save_screenshot(os.path.join(shots, "login-wrong.png"))

    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    # A click does not wait for the navigation it starts.
    try:
        WebDriverWait(driver, 10).until(lambda d: "/login" not in d.current_url)
    except Exception:
        pass
    check(driver.current_url == base + "/reports/history",
          "not back at the page asked for: " + driver.current_url)
    check("Sign in" not in driver.title, "still the form: " + driver.title)
    cookies = {c["name"]: c for c in driver.get_cookies()}
    session = cookies.get("shingled_session")
    check(session is not None, "no session cookie")
    if session is not None:
        check(session.get("httpOnly") is True, "the cookie is not HttpOnly")
        check(session.get("sameSite") == "Lax", "the cookie's SameSite: %s" % session.get("sameSite"))
    check("shingled_session" not in driver.execute_script("return document.cookie"),
          "a script can read the session cookie")
    driver.save_screenshot(os.path.join(shots, "login-after.png"))

    # Another report page, through its link: the session holds.
    driver.get(base + "/reports/")
    check("/login" not in driver.current_url, "the index asked to sign in again")
    links = driver.find_elements(By.CSS_SELECTOR, "nav a")
    check(len(links) > 0, "no navigation on the index")
    if links:
        links[0].click()
        check("/login" not in driver.current_url,
              "a linked page asked to sign in again: " + driver.current_url)
finally:
    driver.quit()

for f in failures:
    print("FAILED: " + f)
sys.exit(1 if failures else 0)
