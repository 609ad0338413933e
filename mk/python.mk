# mk/python.mk — owned by the python part (being written)
