"""For the scripts in this folder (classify.py, detect.py, draw_net.py): run from the source
tree, the folder's caffe/ lacks the compiled core (_caffe), so `import caffe` must find the built
package on PYTHONPATH (e.g. build/python) first. Installed, the folder's caffe/ is complete and
this changes nothing that matters."""
import glob
import os
import sys


def prefer_built_caffe():
    """Moves this folder to the end of sys.path when its caffe/ has no compiled core, so the
    package on PYTHONPATH wins while the scripts here stay importable."""
    here = os.path.dirname(os.path.abspath(__file__))
    if glob.glob(os.path.join(here, 'caffe', '_caffe*.so')):
        return
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path[:] = rest + [here]
