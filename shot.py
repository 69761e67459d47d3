import time
from selenium import webdriver
from selenium.webdriver.common.by import By
o = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--window-size=1200,900"]:
    o.add_argument(a)
d = webdriver.Chrome(options=o)
d.get("http://127.0.0.1:16307/")
time.sleep(2)
ta = d.find_elements(By.TAG_NAME, "textarea")
print("textareas", len(ta))
if ta:
    ta[0].send_keys("A man is riding a bicycle down the street.")
    btns = d.find_elements(By.TAG_NAME, "button")
    print([b.text for b in btns][:8])
    for b in btns:
        if "ranslate" in b.text:
            b.click(); break
    time.sleep(6)
print([l for l in d.get_log("browser")][:5])
d.save_screenshot("/tmp/rev_pkg/page.png")
d.quit()
