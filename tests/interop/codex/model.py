#!/usr/bin/env python3
"""A scripted model for the real `codex app-server` (tests/interop/test_codex.py), stdlib only.

It serves the OpenAI Responses API's streaming shape on 127.0.0.1 (`POST /v1/responses`, an SSE
stream of `response.created`, `response.output_item.done`, `response.completed`), which Codex
reads through a `[model_providers.…]` entry with `base_url` and `wire_api = "responses"`.

    model.py COMMAND

The first request of a turn (no `function_call_output` in its input yet) is answered with a
`function_call` of the shell tool Codex offered (`exec_command` in codex-cli 0.171, `shell` or
`shell_command` in others) running COMMAND, so Codex asks for approval before it runs it; a
request that carries the tool's output is answered with the assistant message `all done`.
Prints `model: listening on http://127.0.0.1:PORT` once it listens; each request's tool names
and whether it carried an output go to stderr.
"""

import http.server
import json
import sys

COMMAND = sys.argv[1]
USAGE = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
         "output_tokens_details": None, "total_tokens": 2}


def tool_call(tools):
    """The function call that runs COMMAND with the shell tool Codex offered."""
    if "exec_command" in tools:
        name, args = "exec_command", {"cmd": COMMAND}
    elif "shell" in tools:
        name, args = "shell", {"command": ["bash", "-lc", COMMAND]}
    else:
        name, args = "shell_command", {"command": COMMAND}
    return {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name,
            "arguments": json.dumps(args)}


class Handler(http.server.BaseHTTPRequestHandler):
    counter = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        # Codex may ask for a model list; it works without one.
        self.send_response(404)
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        tools = [t.get("name") or t.get("type") for t in body.get("tools", [])]
        answered = any(i.get("type") == "function_call_output" for i in body.get("input", []))
        sys.stderr.write("model: %s tools=%s output=%s\n" % (self.path, tools, answered))
        sys.stderr.flush()
        Handler.counter += 1
        rid = "resp_%d" % Handler.counter
        if answered:
            item = {"type": "message", "id": "msg_%d" % Handler.counter, "role": "assistant",
                    "content": [{"type": "output_text", "text": "all done"}]}
        else:
            item = tool_call(tools)
        events = [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": USAGE}},
        ]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for e in events:
            self.wfile.write(("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e))).encode())
        self.wfile.flush()


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("model: listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
