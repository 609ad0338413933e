# mk/php.mk — owned by the php part (being written)
