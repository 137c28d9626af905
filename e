rewind: run cff53c5c5ef4e41a exited:0 after 88456 steps, 3.463s virtual, 25.171s wall
