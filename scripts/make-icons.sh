#!/usr/bin/env bash
# Draws the app icons in icons/ with ImageMagick: the console's favicon (ui/public/favicon.svg:
# a white sextant frame and index dot on the accent blue) redrawn at 1024 px, then scaled to
# the sizes the Tauri shell and a Linux desktop use. The files are committed; run this only
# after changing the glyph. Needs `imagemagick` (scripts/install-desktop-deps.sh installs it).
#
# icon.icns (macOS bundles) is not made: ImageMagick 6 cannot write it. `npx @tauri-apps/cli
# icon icons/icon.png` makes every platform's set when a macOS bundle is wanted.
set -euo pipefail
cd "$(dirname "$0")/../icons"
IM=/usr/bin/convert # /usr/local/bin may hold a stand-in of the same name

# The favicon's 32-unit viewBox, times 32.
"$IM" -size 1024x1024 xc:none \
  -fill '#1f4fd1' -draw 'roundrectangle 0,0 1023,1023 224,224' \
  -fill none -stroke white -strokewidth 77 \
  -draw 'stroke-linejoin round polygon 512,192 800,768 224,768' \
  -stroke none -fill white -draw 'circle 512,576 595,576' \
  PNG32:icon-1024.png

for s in 32 128 512; do
  "$IM" icon-1024.png -filter Lanczos -resize "${s}x${s}" PNG32:"${s}x${s}.png"
done
"$IM" icon-1024.png -filter Lanczos -resize 256x256 PNG32:128x128@2x.png
cp 512x512.png icon.png
"$IM" icon-1024.png -filter Lanczos -define icon:auto-resize=256,128,64,48,32,16 icon.ico
rm icon-1024.png
ls -l
