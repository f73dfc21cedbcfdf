"""The dashboard's colours: a dark neutral frame so app screenshots and status colours stand out."""

BACKGROUND = (15, 23, 42)
PANEL = (30, 41, 59)
BORDER = (71, 85, 105)
TEXT = (241, 245, 249)
MUTED = (148, 163, 184)
SUCCESS = (22, 163, 74)
FAILURE = (220, 38, 38)
WARNING = (217, 119, 6)
NEUTRAL = (100, 116, 139)
LETTERBOX = (2, 6, 23)
