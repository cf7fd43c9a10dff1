from util.helpers import helper

print(helper())
