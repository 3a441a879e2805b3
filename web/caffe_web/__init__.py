"""Caffe's web application: datasets, live training graphs and classification in a browser
(NVIDIA DIGITS's workflow on this project's tools). Start it with scripts/web.sh; docs/WEB.md
describes the pages."""
