class A:
    def run(self):
        return 1


class B:
    def setup(self):
        return 1

    def run(self):
        return 1
