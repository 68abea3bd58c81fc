"""Opening the HTML report in a real headless browser (Debian's chromium and chromedriver, driven by
selenium) the way a reader would: every category and subcategory, every result's view. Each step waits for
what it needs to see (a link to click, an image decoded, a table in its frame), never a fixed pause: the
report renders a click at once, and only images and frames load after it."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
# Headless, and none of Chromium's background connections (this machine has no network).
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync")
FLAGS += ("--disable-background-networking", "--disable-component-update", "--window-size=1400,1000")


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

    def largest_image():
        images = [i for i in driver.find_elements(By.TAG_NAME, "img") if i.is_displayed()]
        largest = max(images, key=lambda i: int(i.get_attribute("naturalWidth") or 0), default=None)
        return largest if largest is not None and int(largest.get_attribute("naturalWidth") or 0) > 100 else None

    def shown_frame():
        return next((f for f in driver.find_elements(By.TAG_NAME, "iframe") if f.is_displayed()), None)

    def result_rows() -> list[str]:
        return [cell.text for cell in driver.find_elements(By.XPATH, "//tr[.//a[@iconname='eye']]/td[1]")]

    try:
        open_path()
        until(lambda _: driver.find_elements(By.XPATH, "//*[text()='RESULTS' or text()='Results']"))
        categories = [a.text for a in driver.find_elements(By.XPATH, "//*[text()='RESULTS' or text()='Results']/following::a") if a.text]
        for category in categories:
            open_path(category)
            rows = result_rows()
            groups = [((category,), rows)] if rows else []
            if not rows:  # a category of subcategories (e.g. one per task)
                names = [a.text for a in driver.find_elements(By.TAG_NAME, "a") if a.text and a.text not in ("Results", category)]
                for name in names:
                    open_path(category, name)
                    groups.append(((category, name), result_rows()))
            for path, files in groups:
                for name in files:
                    open_path(*path)
                    row = driver.find_element(By.XPATH, f"//tr[td[1][text()='{name}']]")
                    row.find_element(By.CSS_SELECTOR, "a[iconname='eye']").click()
                    largest = until(lambda _: largest_image()) if name.endswith(".png") else None
                    if largest is not None:
                        visit.shown[name] = f"image {largest.get_attribute('naturalWidth')}x{largest.get_attribute('naturalHeight')}"
                    elif name.endswith(".html"):
                        frame = until(lambda _: shown_frame())
                        if frame is not None:
                            driver.switch_to.frame(frame)
                            rows = len(until(lambda _: driver.find_elements(By.XPATH, "//table//tr[td]")) or [])
                            text = driver.find_element(By.TAG_NAME, "body").text
                            driver.switch_to.default_content()
                            visit.shown[name] = f"table of {rows} rows: {text}"
                    driver.save_screenshot(str(screenshots / (name.replace("/", "_") + ".png")))
        visit.console_errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    finally:
        driver.quit()
    return visit
