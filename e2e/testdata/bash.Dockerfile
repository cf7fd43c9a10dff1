# boris:latest with a real bash: Debian's static bash (bash-static) as
# /bin/bash, which shell detection must prefer over /bin/sh.
ARG BASE=boris:latest
FROM ${BASE}
COPY bash /bin/bash
