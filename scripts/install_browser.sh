#!/usr/bin/env bash
# Installs the browser that tests/test_page.py drives (Debian's chromium and chromium-driver), and a font with
# Chinese characters (fonts-wqy-zenhei: Chinese, Japanese kana, Korean Hangul) for its pages of a Chinese model,
# with apt-get when any is missing and this runs as root; otherwise says what is missing (the tests then skip,
# naming it). Never fails the caller.
set -uo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
{ command -v fc-list > /dev/null && [ -n "$(fc-list :lang=zh family)" ]; } || missing+=(fonts-wqy-zenhei)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq < /dev/null && apt-get install -y -qq "${missing[@]}" < /dev/null > /dev/null && exit 0
fi
echo "install_browser.sh: could not install ${missing[*]} (needs root and apt-get); tests/test_page.py will skip" >&2
exit 0
