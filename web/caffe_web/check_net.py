"""`python3 -m caffe_web.check_net TRAIN_VAL [TEST]`: sets the net up in the TRAIN phase (and
the TEST phase with TEST) with pycaffe (our
engine), so that a form's network is checked before a job is made. Prints the engine's one-line
error and exits 1 on failure; a separate process, so that no net can take the server down."""
import sys


def main(argv):
    import caffe
    caffe.set_mode_cpu()
    try:
        for phase in [caffe.TRAIN] + ([caffe.TEST] if 'TEST' in argv[2:] else []):
            caffe.Net(argv[1], phase)
    except Exception as error:  # caffe.Error, and Python's own for a broken file
        print('error: {}'.format(error).splitlines()[0])
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
