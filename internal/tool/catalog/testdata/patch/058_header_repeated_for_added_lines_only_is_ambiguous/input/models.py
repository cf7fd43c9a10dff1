import json


class Request(object):
    def __init__(self, url):
        self.url = url
        self.headers = {}

    def prepare(self):
        self.body = None
        return self

    def send(self):
        return json.dumps(self.body)


class Response(object):
    def __init__(self, status):
        self.status = status
        self.headers = {}
