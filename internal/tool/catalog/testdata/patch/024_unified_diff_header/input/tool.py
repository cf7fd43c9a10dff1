import os
import sys

def main():
    print("hi")
    return 0

def helper():
    return 1
