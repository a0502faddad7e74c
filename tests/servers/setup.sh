#!/bin/sh
# Run once at image build time (Dockerfile), as root, from the files of
# tests/servers/ copied to /srv/servers.
set -eu
cd /srv/servers

# postgres: its programs under a path without the major version, and a
# cluster of its own (Debian's package made none: image.sh drops it). The
# tests connect through the Unix socket in /run/postgresql, which the
# imported tarball has no directory for.
ln -s "$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)" /usr/lib/postgresql/bin
install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data
install -d -o postgres -g postgres -m 2775 /run/postgresql
su postgres -s /bin/sh -c \
    'exec /usr/lib/postgresql/bin/initdb --auth=trust --username=postgres -D /var/lib/postgresql/data' >/dev/null

# nginx: the test configuration, and a file whose download takes seconds.
cp nginx.conf greeting.conf /etc/nginx/
install -d /srv/www
head -c 4000000 /dev/zero >/srv/www/big

# gunicorn's WSGI app.
install -d /srv/app
cp app.py /srv/app/
