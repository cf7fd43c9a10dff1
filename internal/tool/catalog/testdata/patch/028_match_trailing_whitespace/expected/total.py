def total(items):   
    s = 0.0
    for i in items:
        s += i
    return s
