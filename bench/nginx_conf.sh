# Shared by remote.sh and remote_latency.sh: nginx_conf WORK PORT writes
# WORK/nginx/nginx.conf for an nginx in the foreground that serves WORK/www
# on 127.0.0.1:PORT with sendfile and kept-alive connections, its temp
# files and logs under WORK/nginx (root runs it as root: nothing else can
# read WORK).
nginx_conf() {
    local work=$1 port=$2 user=""
    [ "$(id -u)" = 0 ] && user="user root root;"
    cat > "$work/nginx/nginx.conf" <<EOF
$user
worker_processes 2;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 512; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    sendfile on;
    keepalive_requests 100000;
    server { listen 127.0.0.1:$port; root $work/www; location / { } }
}
EOF
}
