import socket, struct, time, dns.message
PORT=5398
frames = b""
for i in range(2000):
    w = dns.message.make_query("blocked.test", "A", id=i).to_wire()
    frames += struct.pack(">H", len(w)) + w
def connect():
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    t.connect(("127.0.0.1", PORT)); t.settimeout(0.2); return t
t=connect(); start=time.time(); sent=0; cut=0
while time.time() < start+8:
    try: sent += t.send(frames)
    except socket.timeout: continue
    except OSError as e: cut+=1; t.close(); t=connect()
print("sent", sent, "cut", cut)
