from old_util import helper

print(helper())
