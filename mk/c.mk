# mk/c.mk — owned by the c part (being written)
