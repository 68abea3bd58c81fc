"""Opening the HTML report in a real headless browser (Debian's chromium and chromedriver, driven by
selenium) the way a reader would: every category and subcategory, every result's view. Each step waits for
what it needs to see (a link to click, an image decoded, a table in its frame), never a fixed pause: the
report renders a click at once, and only images and frames load after it. A group's results are listed in
the side bar beside the result shown, so each is opened from the same page, waiting for its own view (an
image or frame other than the last one's)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
# Headless, and none of Chromium's background connections (this machine has no network).
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync")
FLAGS += ("--disable-background-networking", "--disable-component-update", "--window-size=1400,1000")
# The largest decoded image on show whose source is not arguments[0]: one round trip per look, where
# selenium's is_displayed and get_attribute take one each per image.
LARGEST_IMAGE = """
const shown = [...document.images].filter(i => i.offsetParent !== null && i.complete && i.naturalWidth > 100 && i.src !== arguments[0]);
shown.sort((a, b) => b.naturalWidth - a.naturalWidth);
return shown.length ? {src: shown[0].src, width: shown[0].naturalWidth, height: shown[0].naturalHeight} : null;
"""


@dataclass
class Visit:
    """What the browser saw: each result's file name with what its view showed, and the console's errors."""

    shown: dict[str, str] = field(default_factory=dict)  # file -> "image WxH" or "text N characters"
    console_errors: list[str] = field(default_factory=list)


def browse_report(report: Path, screenshots: Path, timeout: float = 10) -> Visit:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    options = Options()
    for flag in FLAGS:
        options.add_argument(flag)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    visit = Visit()
    screenshots.mkdir(parents=True, exist_ok=True)

    def until(condition):
        """What `condition(driver)` returns once it is true, or None after `timeout` seconds (the test's
        assertions then say what was missing)."""
        try:
            return WebDriverWait(driver, timeout).until(condition)
        except TimeoutException:
            return None

    def open_path(*links: str) -> None:
        driver.get(report.resolve().as_uri())
        for link in links:
            element = until(expected_conditions.element_to_be_clickable((By.LINK_TEXT, link)))
            assert element is not None, f"the report shows no link {link!r} after {' > '.join(links)}"
            element.click()

    def shown_image(previous: str | None) -> dict | None:
        """The largest image in view, decoded, other than `previous` (by source): its size."""
        return driver.execute_script(LARGEST_IMAGE, previous)

    def shown_frame(previous: str | None):
        frames = [f for f in driver.find_elements(By.TAG_NAME, "iframe") if f.is_displayed()]
        return next((f for f in frames if f.get_attribute("src") != previous), None)

    def result_rows() -> list[str]:
        return [cell.text for cell in driver.find_elements(By.XPATH, "//tr[.//a[@iconname='eye']]/td[1]")]

    def view_each(files: list[str]) -> None:
        """Open each result of the group in view (its list stays in the side bar) and record what it shows."""
        previous = None  # the source of the last result's image or frame
        for name in files:
            row = driver.find_element(By.XPATH, f"//tr[td[1][text()='{name}']]")
            row.find_element(By.CSS_SELECTOR, "a[iconname='eye']").click()
            image = until(lambda _, seen=previous: shown_image(seen)) if name.endswith(".png") else None
            if image is not None:
                visit.shown[name] = f"image {image['width']}x{image['height']}"
                previous = image["src"]
            elif name.endswith(".html"):
                frame = until(lambda _, seen=previous: shown_frame(seen))
                if frame is not None:
                    previous = frame.get_attribute("src")
                    driver.switch_to.frame(frame)
                    rows = len(until(lambda _: driver.find_elements(By.XPATH, "//table//tr[td]")) or [])
                    text = driver.find_element(By.TAG_NAME, "body").text
                    driver.switch_to.default_content()
                    visit.shown[name] = f"table of {rows} rows: {text}"
            driver.save_screenshot(str(screenshots / (name.replace("/", "_") + ".png")))

    try:
        open_path()
        until(lambda _: driver.find_elements(By.XPATH, "//*[text()='RESULTS' or text()='Results']"))
        categories = [a.text for a in driver.find_elements(By.XPATH, "//*[text()='RESULTS' or text()='Results']/following::a") if a.text]
        for category in categories:
            open_path(category)
            rows = result_rows()
            if rows:
                view_each(rows)
                continue
            # a category of subcategories (e.g. one per task)
            names = [a.text for a in driver.find_elements(By.TAG_NAME, "a") if a.text and a.text not in ("Results", category)]
            for name in names:
                open_path(category, name)
                view_each(result_rows())
        visit.console_errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    finally:
        driver.quit()
    return visit
