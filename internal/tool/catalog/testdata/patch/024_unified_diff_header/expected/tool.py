import os
import re
import sys

def main():
    print("hi")
    return 0

def helper():
    return 2
