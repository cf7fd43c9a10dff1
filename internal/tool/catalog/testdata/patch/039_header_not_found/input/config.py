# settings
DEBUG = False
HOST = "localhost"
PORT = 8080

def load():
    path = "settings.toml"
    with open(path) as f:
        return parse(f.read())

def save(data):
    pass
