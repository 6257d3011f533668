"""The HTTP pieces every middleware here shares: reading a body, and answering as DynamoDB does."""
import json
import uuid
import zlib

ERROR_TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#"
DYNAMODB_JSON = "application/x-amz-json-1.0"
STATUS_LINES = {200: "200 OK", 400: "400 Bad Request", 404: "404 Not Found", 405: "405 Method Not Allowed"}


def read_body(environ):
    """The whole request body, or None when the client closed the connection before sending it all."""
    stream = environ["wsgi.input"]
    length = environ.get("CONTENT_LENGTH")
    if length:
        remaining = int(length)
        chunks = []
        while remaining > 0:
            chunk = stream.read(remaining)
            if not chunk:
                return None
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    if environ.get("wsgi.input_terminated"):  # chunked: the server's reader ends at the last chunk
        return stream.read()
    return b""


def respond(start_response, status, payload, content_type=DYNAMODB_JSON):
    body = json.dumps(payload, separators=(",", ":")).encode()
    start_response(STATUS_LINES[status], [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body))),
        ("x-amzn-RequestId", str(uuid.uuid4())),
        ("x-amz-crc32", str(zlib.crc32(body) & 0xFFFFFFFF)),
    ])
    return [body]


def respond_json(start_response, status, payload):
    """An answer of the launcher's own endpoints (/_strict, /_keys)."""
    return respond(start_response, status, payload, "application/json")


def dynamodb_error(start_response, error, message):
    return respond(start_response, 400, {"__type": ERROR_TYPE_PREFIX + error, "message": message})
